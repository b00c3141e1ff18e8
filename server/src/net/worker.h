#pragma once
// A worker thread: its own io_context, the connections pinned to it, and the active-expiry
// and idle-timeout pass over the shards it owns (shard i belongs to worker i % workers).
// Included only by the net/ sources (it pulls in Asio).
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <thread>
#include <unordered_set>
#include <vector>

#include "server_state.h"

namespace latch {

class Connection;

class Worker {
 public:
  Worker(int index, ServerState& state);
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  boost::asio::io_context& context() { return ctx_; }
  void Start(std::vector<int> shards);
  // Closes every connection and lets the thread finish. Call from any thread; then Join().
  void Shutdown();
  void Join();

  // Worker-thread only.
  void Register(Connection* c) { connections_.insert(c); }
  void Unregister(Connection* c) {
    connections_.erase(c);
    ++closed_since_trim_;
  }

 private:
  void ScheduleTick(std::chrono::milliseconds delay);
  void Tick();
  void TrimHeapAfterCloses();
  static constexpr std::size_t kClosesBeforeTrim = 64;

  int index_;
  ServerState& state_;
  boost::asio::io_context ctx_;
  boost::asio::steady_timer timer_;
  std::thread thread_;
  std::vector<int> shards_;
  std::unordered_set<Connection*> connections_;
  bool stopping_ = false;
  std::size_t closed_since_trim_ = 0;
  std::int64_t last_trim_ms_ = -1000;
};

}  // namespace latch
