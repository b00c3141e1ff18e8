#pragma once
// The Prometheus text exposition (format 0.0.4) of the server's counters and gauges: what
// INFO reports, under latch_* names with HELP and TYPE lines. No I/O here; the HTTP side
// is metrics_http.
#include <string>

namespace latch {

struct ServerState;

std::string MetricsText(ServerState& state);

}  // namespace latch
