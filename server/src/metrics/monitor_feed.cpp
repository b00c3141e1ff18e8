#include "metrics/monitor_feed.h"

#include <functional>

#include "client_registry.h"

namespace latch {

void MonitorFeed::Add(const std::shared_ptr<ClientInfo>& monitor) {
  std::lock_guard lock(mu_);
  monitors_.push_back(monitor);
  count_.store(static_cast<int>(monitors_.size()), std::memory_order_relaxed);
}

void MonitorFeed::Push(const std::string& line) {
  std::vector<std::function<void(std::string)>> pushes;
  {
    std::lock_guard lock(mu_);
    std::erase_if(monitors_, [](const auto& w) { return w.expired(); });
    count_.store(static_cast<int>(monitors_.size()), std::memory_order_relaxed);
    pushes.reserve(monitors_.size());
    for (const auto& w : monitors_) {
      if (auto m = w.lock()) pushes.push_back(m->push);  // set once at the connection's start
    }
  }
  for (auto& push : pushes) {
    if (push) push(line);
  }
}

}  // namespace latch
