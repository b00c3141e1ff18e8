#pragma once
// The part of /metrics that dashboards built for oliver006/redis_exporter read: the same
// numbers as latch_* (the stats registry), under redis_exporter's names and labels
// (redis_connected_clients, redis_commands_total{cmd="get"}, redis_db_keys{db="db0"}, ...),
// so a Redis dashboard works against latchd without an exporter. Also the per-command
// counters of INFO commandstats and the lock histograms (metrics/lock_timings.h).
#include <string>

namespace latch {

struct ServerState;

void AppendRedisExporterMetrics(std::string* out, ServerState& st);

}  // namespace latch
