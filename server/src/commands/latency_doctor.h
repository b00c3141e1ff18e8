#pragma once
// LATENCY DOCTOR's report: Redis's two fixed answers when the monitor is off and never
// recorded anything, or on without a spike; otherwise latchd's own summary of each event
// (how many spikes, their average and mean deviation, how far apart, the worst) and what to
// look at for each kind of event.
#include <cstdint>
#include <string>
#include <vector>

#include "metrics/latency_monitor.h"

namespace latch {

std::string LatencyDoctorReport(const std::vector<LatencyEvent>& events, std::int64_t threshold_ms);

}  // namespace latch
