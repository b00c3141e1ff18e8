#include "server_state.h"

#include <spdlog/logger.h>

#include <random>

#include "config/log_setup.h"
#include "journal/persistence.h"
#include "metrics/command_stats.h"
#include "metrics/latency_monitor.h"
#include "metrics/lock_timings.h"
#include "metrics/monitor_feed.h"
#include "metrics/slowlog.h"

namespace latch {

int StripedCounter::Stripe() {
  static std::atomic<int> next{0};
  thread_local int mine = next.fetch_add(1, std::memory_order_relaxed) % kStripes;
  return mine;
}

namespace {
std::string RandomHex(std::size_t n) {
  std::random_device rd;
  std::mt19937_64 gen(rd());
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s(n, '0');
  for (char& c : s) c = kHex[gen() & 15];
  return s;
}
}  // namespace

ServerState::ServerState(Options opts, std::shared_ptr<Clock> clk, int shard_count, int threads)
    : options(std::move(opts)),
      clock(std::move(clk)),
      dbs(options.databases, shard_count, clock->MonoMs()),
      io_threads(threads),
      start_mono_ms(clock->MonoMs()),
      run_id(RandomHex(40)) {
  log = config::ServerLogger(options);
  persistence = std::make_shared<journal::Persistence>(
      journal::PersistenceParts{options_mu, options, *log, *clock, dbs,
                                [this](int db) -> store::Keyspace& { return Database(db); }, locks,
                                key_events, faults, journal_write_errno, loading});
  command_stats = std::make_shared<CommandStats>();
  slowlog = std::make_shared<Slowlog>();
  latency_monitor = std::make_shared<LatencyMonitor>();
  monitors = std::make_shared<MonitorFeed>();
  lock_timings = std::make_shared<LockTimings>(dbs.max_shards());
  lock_timings->clock = clock.get();
  locks.stats().wait_timer = lock_timings.get();
  key_events.set_lock_timings(lock_timings.get());
  key_events.set_expiry_hold([this](std::int64_t now_ms) { return ExpiryPaused(now_ms); });
  SyncHotOptions();
  startup_memory = store::UsedMemoryBytes();
}

store::Keyspace& ServerState::Database(int db) {
  return dbs.Ensure(db, [this](store::Keyspace& ks) {
    locks.Add(ks);
    key_events.Install(ks);
  });
}

void ServerState::SyncHotOptions() {
  proto_max_bulk_len = options.proto_max_bulk_len;
  client_query_buffer_limit = options.client_query_buffer_limit;
  maxclients = options.maxclients;
  obuf_hard = options.client_output_buffer_limit[0].hard;
  obuf_soft = options.client_output_buffer_limit[0].soft;
  obuf_soft_seconds = options.client_output_buffer_limit[0].soft_seconds;
  obuf_pubsub_hard = options.client_output_buffer_limit[2].hard;
  obuf_pubsub_soft = options.client_output_buffer_limit[2].soft;
  obuf_pubsub_soft_seconds = options.client_output_buffer_limit[2].soft_seconds;
  timeout = options.timeout;
  maxmemory = options.maxmemory;
  slowlog_slower_than = options.slowlog_log_slower_than;
  slowlog_max_len = options.slowlog_max_len;
  latency_tracking = options.latency_tracking;
  latency_monitor_threshold = options.latency_monitor_threshold;
  command_stats->SetSlowNanos(
      RecordSlowNanos(options.slowlog_log_slower_than, options.latency_monitor_threshold));
  RefreshHeapBytes();
}

void ServerState::RefreshHeapBytes() {
  heap_bytes.store(store::HeapBytes(), std::memory_order_relaxed);
  RaiseMemoryPeak(heap_bytes.load(std::memory_order_relaxed) + store::Slab::Bytes());
}

}  // namespace latch
