#include "metrics/latency_monitor.h"

#include <algorithm>

namespace latch {

void LatencyMonitor::Add(std::string_view event, std::int64_t ms, std::int64_t unix_seconds) {
  std::lock_guard lock(mu_);
  auto it = events_.find(event);
  if (it == events_.end()) {
    it = events_.emplace(std::string(event), LatencyEvent{std::string(event), {}, 0}).first;
  }
  LatencyEvent& e = it->second;
  e.max_ms = std::max(e.max_ms, ms);
  // One sample per second: the worst of that second.
  if (!e.samples.empty() && e.samples.back().unix_seconds == unix_seconds) {
    e.samples.back().ms = std::max(e.samples.back().ms, ms);
    return;
  }
  e.samples.push_back({unix_seconds, ms});
  if (e.samples.size() > kLatencySamples) e.samples.pop_front();
}

std::vector<LatencyEvent> LatencyMonitor::Events() const {
  std::lock_guard lock(mu_);
  std::vector<LatencyEvent> out;
  out.reserve(events_.size());
  for (const auto& [name, e] : events_) out.push_back(e);
  return out;
}

std::size_t LatencyMonitor::Reset(const std::vector<std::string_view>& names) {
  std::lock_guard lock(mu_);
  if (names.empty()) {
    const std::size_t n = events_.size();
    events_.clear();
    return n;
  }
  std::size_t n = 0;
  for (std::string_view name : names) {
    auto it = events_.find(name);
    if (it == events_.end()) continue;
    events_.erase(it);
    ++n;
  }
  return n;
}

}  // namespace latch
