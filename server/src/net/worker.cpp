#include "net/worker.h"

#include <malloc.h>
#include <spdlog/logger.h>

#include <boost/asio/post.hpp>
#include <chrono>
#include <mutex>

#include "commands/client_pause.h"
#include "journal/journal.h"
#include "journal/server_hooks.h"
#include "metrics/latency_monitor.h"
#include "net/connection.h"
#include "net/uring_ring.h"
#include "store/shard_guard.h"

namespace latch {
namespace {
// Keys reclaimed per shard before its lock is released and other work can run.
constexpr std::size_t kExpireBudgetPerShard = 1000;
}  // namespace

Worker::Worker(int index, ServerState& state, bool uring)
    : index_(index),
      state_(state),
      ring_(uring ? std::make_unique<UringRing>(ctx_) : nullptr),
      timer_(ctx_) {}

Worker::~Worker() = default;

void Worker::Start(std::vector<int> shards) {
  shards_ = std::move(shards);
  ScheduleTick(std::chrono::milliseconds(1));
  thread_ = std::thread([this] {
    auto guard = boost::asio::make_work_guard(ctx_);
    (void)guard;
    // This thread writes its journal records at the end of its pass (journal_pass.cpp). A
    // cluster node's replies wait for Raft instead, so there the journal thread writes them.
    if (state_.reply_log == nullptr) journal::FlushesItsOwnRecords();
    // The exception boundary of the thread: a failure that escapes a handler (connections
    // catch their own, see Connection::SafePump) is logged and the loop goes on serving,
    // instead of std::terminate ending every client's session.
    for (;;) {
      try {
        ctx_.run();
        return;
      } catch (const std::exception& e) {
        state_.log->error("Worker {}: a handler failed ({}); serving on", index_, e.what());
      }
    }
  });
}

void Worker::Adopt(boost::asio::ip::tcp::socket socket, std::shared_ptr<ClientInfo> info,
                   std::shared_ptr<TlsContext> tls) {
  bool first = false;
  {
    std::lock_guard lock(adopt_mu_);
    first = adopted_.empty();
    adopted_.push_back(Adopted{std::move(socket), std::move(info), std::move(tls)});
  }
  if (first) boost::asio::post(ctx_, [this] { StartAdopted(); });
}

void Worker::StartAdopted() {
  std::vector<Adopted> batch;
  bool more = false;
  {
    std::lock_guard lock(adopt_mu_);
    const std::size_t n = std::min(kAdoptBatch, adopted_.size());
    std::move(adopted_.begin(), adopted_.begin() + static_cast<std::ptrdiff_t>(n),
              std::back_inserter(batch));
    adopted_.erase(adopted_.begin(), adopted_.begin() + static_cast<std::ptrdiff_t>(n));
    more = !adopted_.empty();
  }
  // Queued behind whatever arrived meanwhile: the clients already connected go first.
  if (more) boost::asio::post(ctx_, [this] { StartAdopted(); });
  for (auto& [socket, info, tls] : batch) {
    if (stopping_) break;
    auto c = std::make_shared<Connection>(std::move(socket), std::move(tls), state_, *this,
                                          std::move(info));
    c->Start();
  }
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
  const auto cycle_start = std::chrono::steady_clock::now();  // LATENCY's "expire-cycle"
  // Shards are owned by their index within a database: the same ones in every database.
  const int databases = state_.dbs.created();
  for (int k = 0; k < databases; ++k) {
    store::Keyspace& ks = state_.dbs.by_identity(k);
    for (int i : shards_) {
      store::Shard& s = ks.shard(i);
      s.TickAccessClock(now);  // OBJECT IDLETIME's clock; needs no lock
      // A shard held by someone else (a script or EXEC holds them all) is skipped this time:
      // this thread must stay free to answer BUSY and SCRIPT KILL while a script runs.
      // Noted held (store/shard_guard.h): on a cluster node the pass's expiries and the
      // hand-offs they cause are one log entry, closed before the shard is released.
      if (!store::TryLockShard(s)) continue;
      const struct Held {
        store::Shard& s;
        ~Held() { store::UnlockShard(s); }
      } held{s};
      if (!state_.ExpiryPaused(now) &&  // CLIENT PAUSE holds expiry (and so lock hand-offs)
          !state_.client_pause->active_expire_off() &&  // DEBUG SET-ACTIVE-EXPIRE 0
          s.ExpireDue(now, kExpireBudgetPerShard) == kExpireBudgetPerShard) {
        more = true;
      }
      // WAIT deadlines on the injected Clock.
      state_.locks.ForShard(s.index()).TimeOutWaiters(now);
      s.Trim(now);
    }
  }
  if (const std::int64_t threshold = state_.latency_monitor_threshold.load(); threshold > 0) {
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::steady_clock::now() - cycle_start)
                        .count();
    LatencySampleIfNeeded(state_.latency_monitor.get(), threshold, "expire-cycle", ms,
                          state_.clock->Now().wall_ms / 1000);
  }
  // maxmemory compares against the heap's bytes as of the last tick (mallinfo2 per command
  // would cost more than the command).
  if (state_.maxmemory.load(std::memory_order_relaxed) > 0) {
    state_.RefreshHeapBytesEvery100Ms(now);
  }
  // Idle timeouts and soft output limits count seconds: a pass over the connections every
  // 100 ms is enough, also while the tick runs every millisecond for lock waiters.
  const int timeout = state_.timeout.load();
  if ((timeout > 0 || state_.obuf_soft.load(std::memory_order_relaxed) > 0 ||
       (state_.obuf_pubsub_soft.load(std::memory_order_relaxed) > 0 && state_.pubsub.Active())) &&
      now - last_connection_pass_ms_ >= 100) {
    last_connection_pass_ms_ = now;
    std::vector<Connection*> conns(connections_.begin(), connections_.end());
    for (Connection* c : conns) c->OnTick(now, timeout);
  }
  TrimHeap();
  // Active expiry's deletions: no reply waits for them.
  journal::FlushAppendedSoon({state_.persistence.get(), state_.reply_log}, ctx_);
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

// After many clients went away (a connection storm) or big replies were written, the freed
// buffers sit in malloc's arenas (glibc serves blocks up to 32 MiB from them once a big
// block was freed), where they keep the RSS up: malloc_trim gives the free pages back. At
// most once a second, and only after such frees, so a steady load pays nothing. (Mapping
// every big block on its own instead made each 4 MB GET page-fault its reply: 10x slower.)
// Real time, not the injected clock: this is about the process, not about keys.
void Worker::TrimHeap() {
  const std::int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                  std::chrono::steady_clock::now().time_since_epoch())
                                  .count();
  if (closed_since_trim_ < kClosesBeforeTrim && freed_since_trim_ < kFreedBeforeTrim) return;
  if (now_ms - last_trim_ms_ < 1000) return;
  closed_since_trim_ = 0;
  freed_since_trim_ = 0;
  last_trim_ms_ = now_ms;
  malloc_trim(0);
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
