#pragma once
// MONITOR: every command that runs (a client's, EXEC's queue, a script's redis.call as
// "[0 lua]"), after it ran, as Redis's line `+1700000000.123456 [0 127.0.0.1:5555] "SET" "k"
// "v"`, pushed to each monitoring connection (ClientInfo::push). Admin commands are not shown
// and passwords are redacted, as in Redis. A monitor that reads too slowly is closed by its
// output limit (net/connection.cpp). The data path pays one relaxed load while nobody
// monitors.
#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

namespace latch {

struct ClientInfo;
struct CommandContext;
struct CommandSpec;

class MonitorFeed {
 public:
  void Add(const std::shared_ptr<ClientInfo>& monitor);
  bool active() const { return count_.load(std::memory_order_relaxed) > 0; }
  // Formats the command once and pushes it to every monitor still connected.
  void Feed(const CommandSpec& spec, const CommandContext& ctx);

 private:
  std::mutex mu_;
  std::vector<std::weak_ptr<ClientInfo>> monitors_;
  std::atomic<int> count_{0};
};

}  // namespace latch
