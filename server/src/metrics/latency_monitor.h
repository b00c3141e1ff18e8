#pragma once
// LATENCY's event monitor (latency-monitor-threshold): when the threshold is > 0 ms, an event
// that took at least that long leaves a sample under Redis's event names: "command" (a
// command without the fast flag), "fast-command" (one with it), "expire-cycle" (a pass of
// the worker's active expiry). Per event, as Redis keeps them: the last 160 samples (one per
// second: a second spike in the same second raises its sample instead of adding one) and
// the worst latency ever seen. LATENCY LATEST/HISTORY/RESET/DOCTOR read it.
//
// Only events over the threshold reach Add, so one mutex is enough.
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace latch {

struct LatencySample {
  std::int64_t unix_seconds = 0;
  std::int64_t ms = 0;
};

struct LatencyEvent {
  std::string name;
  std::deque<LatencySample> samples;  // oldest first, at most kLatencySamples
  std::int64_t max_ms = 0;
};

inline constexpr std::size_t kLatencySamples = 160;

class LatencyMonitor {
 public:
  // Records `ms` for `event` at `unix_seconds` (the caller checked the threshold).
  void Add(std::string_view event, std::int64_t ms, std::int64_t unix_seconds);
  // Every event with samples, in name order.
  std::vector<LatencyEvent> Events() const;
  // Forgets the named events (all of them when `names` is empty); returns how many had
  // samples.
  std::size_t Reset(const std::vector<std::string_view>& names);

 private:
  mutable std::mutex mu_;
  std::map<std::string, LatencyEvent, std::less<>> events_;
};

// Records `ms` under `event` when latency-monitor-threshold (threshold_ms) is on and `ms`
// reaches it.
inline void LatencySampleIfNeeded(LatencyMonitor* monitor, std::int64_t threshold_ms,
                                  std::string_view event, std::int64_t ms,
                                  std::int64_t unix_seconds) {
  if (monitor != nullptr && threshold_ms > 0 && ms >= threshold_ms) {
    monitor->Add(event, ms, unix_seconds);
  }
}

}  // namespace latch
