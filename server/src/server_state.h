#pragma once
// State shared by every worker thread: options, keyspace, statistics, client registry.
// Passed to command handlers through CommandContext; nothing here is global.
//
// Its own layer, just above the services (scripts/layers.txt): it holds parts of the layers
// below by value and the parts of the layers above (ACL, CLIENT PAUSE, the command table, the
// script engine, TLS) forward-declared, built and set by the server (state_wiring.h).
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace spdlog {
class logger;
}  // namespace spdlog

#include "client_registry.h"
#include "fault_injector.h"
#include "key_event_router.h"
#include "latch/clock.h"
#include "latch/options.h"
#include "metrics/error_stats.h"
#include "pubsub/pubsub_registry.h"
#include "store/keyspace.h"
#include "store/keyspace_set.h"
#include "store/lock_table.h"
#include "striped_counter.h"
#include "watch_registry.h"

namespace latch {

class CommandTable;      // commands/command_table.h
class CommandCatalogue;  // catalogue/command_catalogue.h
class CommandStats;      // metrics/command_stats.h
class Slowlog;           // metrics/slowlog.h
class LatencyMonitor;    // metrics/latency_monitor.h
class ClientPause;       // commands/client_pause.h
class MonitorFeed;       // metrics/monitor_feed.h
class LockTimings;       // metrics/lock_timings.h
namespace acl {
class Registry;
}  // namespace acl
namespace scripting {
class ScriptEngine;
}  // namespace scripting
namespace journal {
class Persistence;
class ReplyLog;
}  // namespace journal
namespace cluster {
class ClusterLog;
}  // namespace cluster
class TlsContextSlot;
struct AclDenialCounters;  // metrics/acl_counters.h

// Bumped on the data path by every worker: striped, so that counting costs no cache-line
// traffic between cores (see striped_counter.h). What INFO, /metrics and RESETSTAT do with
// each is declared once in report/stats_registry.cpp.
struct Stats {
  StripedCounter total_connections;
  StripedCounter rejected_connections;
  StripedCounter total_commands;
  StripedCounter keyspace_hits;
  StripedCounter keyspace_misses;
  StripedCounter net_input_bytes;
  StripedCounter net_output_bytes;
  StripedCounter protocol_errors;
  ErrorStats errors;  // total_error_replies, errorstats: every connection's writer reports here
  std::atomic<std::uint64_t> expired_keys_at_reset{0};  // keyspace total at the last RESETSTAT
};

struct ServerState {
  ServerState(Options opts, std::shared_ptr<Clock> clk, int shard_count, int threads);

  // Where this server logs (Options::logger_name; config::ServerLogger). Never null.
  std::shared_ptr<spdlog::logger> log;

  // Options may change at run time (CONFIG SET): read and write them under options_mu.
  std::mutex options_mu;
  Options options;
  std::shared_ptr<Clock> clock;
  // The databases (SELECT): one keyspace each, created on first use (store/keyspace_set.h).
  store::KeyspaceSet dbs;
  store::LockTables locks{dbs, *clock};  // LOCK.* waiters, fencing tokens, counters
  Stats stats;
  // INFO commandstats/latencystats and SLOWLOG, recorded by Dispatch after every command.
  std::shared_ptr<CommandStats> command_stats;
  std::shared_ptr<Slowlog> slowlog;
  std::shared_ptr<LatencyMonitor> latency_monitor;  // LATENCY LATEST/HISTORY events
  std::shared_ptr<LockTimings> lock_timings;        // lock histograms of /metrics
  std::shared_ptr<MonitorFeed> monitors;            // MONITOR clients, fed by Dispatch
  // CLIENT PAUSE: 0 none, 1 WRITE, 2 ALL, until client_pause_end_ms (monotonic). Dispatch
  // reads the type (one relaxed load) and parks a paused command in client_pause.
  std::atomic<int> client_pause_type{0};
  std::atomic<std::int64_t> client_pause_end_ms{0};
  std::shared_ptr<ClientPause> client_pause;  // set by WireUpperParts (state_wiring.h)
  // No key expires actively while clients are paused (WRITE or ALL), as in Redis: an expiry
  // would hand a lock to a waiter.
  // Nor on a Raft follower, ever: the leader's deletions arrive as log entries.
  bool ExpiryPaused(std::int64_t now_ms) const {
    if (raft_follower.load(std::memory_order_relaxed)) return true;
    return client_pause_type.load(std::memory_order_relaxed) != 0 &&
           now_ms < client_pause_end_ms.load(std::memory_order_relaxed);
  }
  ClientRegistry clients;
  WatchRegistry watches;
  KeyEventRouter key_events{dbs, locks, watches};  // the shards' one write hook
  // Database `db` (0 <= db < dbs.count()), created with its lock tables and key-event hook
  // on first use (SELECT, MOVE, COPY ... DB, SWAPDB, the journal's loader).
  store::Keyspace& Database(int db);
  pubsub::PubSubRegistry pubsub;  // channel and pattern subscribers (its own lock)
  // The command table, set by the server once built: `commands` to dispatch through, and the
  // same object as `catalogue` for what only reads the specs (ACL, INFO, /metrics), so that
  // those need not know the dispatcher.
  const CommandTable* commands = nullptr;
  const CommandCatalogue* catalogue = nullptr;
  // Fault injection and test mode (fault_injector.h; TEST.* commands, ScopedServer).
  testing::FaultInjector faults{options.enable_test_commands};
  // ACL users (acl/registry.h), set by WireUpperParts (state_wiring.h); requirepass is the
  // default user's password (acl::ApplyRequirepass).
  std::shared_ptr<acl::Registry> acl;
  // Its refusal counters (the same object), for INFO and /metrics.
  AclDenialCounters* acl_denials = nullptr;
  // SHUTDOWN: asks the server to stop accepting, close every client and let Server::wait()
  // return. Safe from any thread, including a worker inside a command (it blocks on nothing).
  std::function<void()> request_shutdown;
  // EVAL/SCRIPT (scripting/): the server-wide script cache and Lua state, created on first
  // use through scripting::EngineFor(). script_busy is set while a script runs past
  // lua-time-limit: Dispatch then answers BUSY to commands not flagged allow_busy.
  std::once_flag scripting_once;
  std::shared_ptr<scripting::ScriptEngine> scripting;
  std::atomic<bool> script_busy{false};
  // A cluster node (cluster/cluster_log.h, docs/CLUSTER.md; null without raft-peers): its
  // Raft log, and whether it is a follower, which refuses writes with -READONLY
  // (commands/command_table.cpp) and expires nothing (ExpiryPaused).
  // reply_log is the same log as the journal's hold sees it (journal/reply_log.h). Both are
  // set before the workers start and cleared after they stop.
  std::shared_ptr<cluster::ClusterLog> cluster;
  journal::ReplyLog* reply_log = nullptr;
  std::atomic<bool> raft_follower{false};
  // The journal, its loader and rewrite (journal/persistence.h); set by the server.
  std::shared_ptr<journal::Persistence> persistence;
  // The errno of the journal's last failed write or fdatasync, 0 when the last one worked:
  // while it is set, writes are refused with -MISCONF (Redis's writeCommandsDeniedByDiskError;
  // commands/command_table.cpp).
  std::atomic<int> journal_write_errno{0};
  // True while the journal is loaded at start (ServerImpl::Start, server.cpp): commands not
  // flagged kCmdLoading get -LOADING (the dispatcher, commands/command_table.cpp).
  std::atomic<bool> loading{false};
  // lock-restart-delay: no lock is granted before this monotonic time. Armed by
  // ServerImpl::StartServing (server.cpp) before any listener opens; read through
  // CommandContext::env() by the lock Ops (docs/design/locks.md).
  std::atomic<std::int64_t> grants_held_until_mono_ms{0};
  // The TLS port's certificates (net/tls_context.h): null when tls-port is off.
  std::shared_ptr<TlsContextSlot> tls;
  // CONFIG SET's reload of the TLS context (net/tls_config_set.h), set by the server: given
  // the updated options and CONFIG SET's name/value pairs, Redis's error reply when a tls-*
  // change does not load. Unset (tests' bare states): nothing to reload.
  std::function<std::optional<std::string>(const Options& updated,
                                           std::span<const std::string_view> args)>
      reload_tls;
  int io_threads;
  int tcp_port = 0;
  int metrics_port = 0;  // bound port of GET /metrics, 0 when off
  std::int64_t start_mono_ms;
  std::string run_id;
  // Values read on every request, mirrored from options for lock-free access.
  std::atomic<std::int64_t> proto_max_bulk_len;
  std::atomic<std::int64_t> client_query_buffer_limit;
  std::atomic<int> maxclients;
  // client-output-buffer-limit of the normal class.
  std::atomic<std::uint64_t> obuf_hard{0}, obuf_soft{0};
  std::atomic<std::int64_t> obuf_soft_seconds{0};
  // ... and of the pubsub class (a client with a subscription).
  std::atomic<std::uint64_t> obuf_pubsub_hard{0}, obuf_pubsub_soft{0};
  std::atomic<std::int64_t> obuf_pubsub_soft_seconds{0};
  std::atomic<int> timeout;
  std::atomic<bool> auth_required;
  std::atomic<std::int64_t> maxmemory;
  std::atomic<std::int64_t> slowlog_slower_than{10000};  // us; negative: off
  std::atomic<std::int64_t> slowlog_max_len{128};
  std::atomic<bool> latency_tracking{true};
  std::atomic<std::int64_t> latency_monitor_threshold{0};  // ms; 0: off
  // The malloc heap's bytes in use, refreshed by the tick and by CONFIG SET (mallinfo2 is
  // too slow per command); the slabs' bytes are read live.
  std::atomic<std::size_t> heap_bytes{0};
  // MEMORY STATS: the bytes in use once the server was built, and the most seen since
  // (raised by RefreshHeapBytes and by MEMORY STATS itself).
  std::size_t startup_memory = 0;
  std::atomic<std::size_t> used_memory_peak{0};
  void RaiseMemoryPeak(std::size_t bytes) {
    std::size_t seen = used_memory_peak.load(std::memory_order_relaxed);
    while (bytes > seen && !used_memory_peak.compare_exchange_weak(seen, bytes)) {
    }
  }

  void RefreshHeapBytes();
  // RefreshHeapBytes at most every 100 ms across all workers (mallinfo2 locks every arena;
  // a worker re-ticks at once during a mass expiry).
  void RefreshHeapBytesEvery100Ms(std::int64_t now_ms) {
    std::int64_t last = heap_refreshed_ms.load(std::memory_order_relaxed);
    if (now_ms - last < 100 ||
        !heap_refreshed_ms.compare_exchange_strong(last, now_ms, std::memory_order_relaxed)) {
      return;
    }
    RefreshHeapBytes();
  }
  std::atomic<std::int64_t> heap_refreshed_ms{0};
  // Used memory is over maxmemory (when set): commands flagged denyoom are refused.
  bool OverMaxmemory() const {
    const std::int64_t limit = maxmemory.load(std::memory_order_relaxed);
    return limit > 0 && heap_bytes.load(std::memory_order_relaxed) + store::Slab::Bytes() >
                            static_cast<std::size_t>(limit);
  }

  // Call under options_mu after changing options (then acl::ApplyRequirepass, acl_file.h).
  void SyncHotOptions();
};

}  // namespace latch
