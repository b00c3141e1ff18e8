#include "net/worker.h"

#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>
#include <mutex>

#include "net/connection.h"

namespace latch {
namespace {
// Keys reclaimed per shard before its lock is released and other work can run.
constexpr std::size_t kExpireBudgetPerShard = 1000;
}  // namespace

Worker::Worker(int index, ServerState& state) : index_(index), state_(state), timer_(ctx_) {}

void Worker::Start(std::vector<int> shards) {
  shards_ = std::move(shards);
  ScheduleTick(std::chrono::milliseconds(1));
  thread_ = std::thread([this] {
    auto guard = boost::asio::make_work_guard(ctx_);
    (void)guard;
    ctx_.run();
  });
}

void Worker::ScheduleTick(std::chrono::milliseconds delay) {
  timer_.expires_after(delay);
  timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec && !stopping_) Tick();
  });
}

// Active expiry: reclaim due keys of every owned shard in bounded steps; when a shard still
// has due keys after its budget, run again right away (behind queued I/O) instead of waiting
// a full period. Also closes idle clients when `timeout` is set.
void Worker::Tick() {
  std::int64_t now = state_.clock->MonoMs();
  bool more = false;
  for (int i : shards_) {
    store::Shard& s = state_.keyspace.shard(i);
    // A shard held by someone else (a script or EXEC holds them all) is skipped this time:
    // this thread must stay free to answer BUSY and SCRIPT KILL while a script runs.
    std::unique_lock lock(s.mu(), std::try_to_lock);
    if (!lock.owns_lock()) continue;
    if (s.ExpireDue(now, kExpireBudgetPerShard) == kExpireBudgetPerShard) more = true;
    state_.locks.ForShard(i).TimeOutWaiters(now);  // WAIT deadlines on the injected Clock
    s.Trim(now);
  }
  // maxmemory compares against the heap's bytes as of the last tick (mallinfo2 per command
  // would cost more than the command).
  if (state_.maxmemory.load(std::memory_order_relaxed) > 0) {
    state_.RefreshHeapBytesEvery100Ms(now);
  }
  int timeout = state_.timeout.load();
  if (timeout > 0) {
    std::vector<Connection*> conns(connections_.begin(), connections_.end());
    for (Connection* c : conns) c->CloseIfIdle(now, timeout);
  }
  int hz = 10;
  {
    std::lock_guard lock(state_.options_mu);
    hz = std::clamp(state_.options.hz, 1, 500);
  }
  // While clients are parked on locks, a lock's expiry must reach its first waiter at the
  // deadline, not up to a tick later: tick every millisecond then (a pass over idle shards
  // costs about a microsecond per shard).
  auto period = std::chrono::milliseconds(1000 / hz);
  if (state_.locks.stats().waiters.load(std::memory_order_relaxed) > 0) {
    period = std::chrono::milliseconds(1);
  }
  ScheduleTick(more ? std::chrono::milliseconds(0) : period);
}

void Worker::Shutdown() {
  boost::asio::post(ctx_, [this] {
    stopping_ = true;
    timer_.cancel();
    std::vector<Connection*> conns(connections_.begin(), connections_.end());
    for (Connection* c : conns) c->Close();
    ctx_.stop();
  });
}

void Worker::Join() {
  if (thread_.joinable()) thread_.join();
}

}  // namespace latch
