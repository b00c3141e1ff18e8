#pragma once
// MONITOR's connections: each is pushed every line FeedMonitors (commands/monitor.h) formats
// (ClientInfo::push). A monitor that reads too slowly is closed by its output limit
// (net/connection.cpp). The data path pays one relaxed load while nobody monitors.
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace latch {

struct ClientInfo;

class MonitorFeed {
 public:
  void Add(const std::shared_ptr<ClientInfo>& monitor);
  bool active() const { return count_.load(std::memory_order_relaxed) > 0; }
  // Pushes one line to every monitor still connected (and forgets the others).
  void Push(const std::string& line);

 private:
  std::mutex mu_;
  std::vector<std::weak_ptr<ClientInfo>> monitors_;
  std::atomic<int> count_{0};
};

}  // namespace latch
