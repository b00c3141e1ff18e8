#include "config/ignored_directives.h"

#include <array>
#include <cstdlib>
#include <limits>

#include "config/config_values.h"

namespace latch::config {
namespace {

using Kind = IgnoredDirective::Kind;
using Args = std::vector<std::string>;
using IgnoredReason = std::optional<std::string>;

constexpr long long kIgnoredIntMin = std::numeric_limits<int>::min();
constexpr long long kIgnoredIntMax = std::numeric_limits<int>::max();
constexpr long long kIgnoredLongMax = std::numeric_limits<long long>::max();

constexpr IgnoredDirective Bool(std::string_view name) { return {name, Kind::kBool}; }
constexpr IgnoredDirective Int(std::string_view name, long long min, long long max) {
  return {name, Kind::kInteger, min, max};
}
constexpr IgnoredDirective Memory(std::string_view name, long long min, long long max) {
  return {name, Kind::kMemory, min, max};
}
constexpr IgnoredDirective Enum(std::string_view name, std::string_view choices) {
  return {name, Kind::kEnum, 0, 0, choices};
}
constexpr IgnoredDirective String(std::string_view name) { return {name, Kind::kString}; }
constexpr IgnoredDirective Special(std::string_view name, IgnoredReason (*check)(const Args&),
                                   bool multi_argument = false) {
  return {name, Kind::kSpecial, 0, 0, {}, check, multi_argument};
}

IgnoredReason WrongArgumentCount() { return std::string("wrong number of arguments"); }

IgnoredReason CheckYesNo(const std::string& value) {
  const Parsed<bool> parsed = ParseYesNo(value);
  if (const auto* reason = std::get_if<std::string>(&parsed)) return *reason;
  return std::nullopt;
}

// Redis's keyspace event classes (7.0 added 'n', new keys).
IgnoredReason CheckNotifyKeyspaceEvents(const Args& args) {
  if (args.size() != 2) return WrongArgumentCount();
  for (char c : args[1]) {
    if (std::string_view("Ag$lshzxeKEtmdn").find(c) == std::string_view::npos) {
      return std::string("Invalid event class character. Use 'Ag$lshzxeKEtmdn'.");
    }
  }
  return std::nullopt;
}

IgnoredReason CheckOomScoreAdjValues(const Args& args) {
  if (args.size() != 4) return WrongArgumentCount();
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::optional<std::int64_t> value = ParseStrictInteger(args[i]);
    if (!value || *value < -2000 || *value > 2000) {
      return std::string("Invalid oom-score-adj-values, elements must be between -2000 and 2000.");
    }
  }
  return std::nullopt;
}

IgnoredReason CheckLatencyPercentiles(const Args& args) {
  for (std::size_t i = 1; i < args.size(); ++i) {
    if (args.size() == 2 && args[1].empty()) break;  // `""`: no percentiles
    char* end = nullptr;
    const double value = std::strtod(args[i].c_str(), &end);
    if (args[i].empty() || *end != '\0') {
      return std::string("Invalid latency-tracking-info-percentiles parameters");
    }
    if (value < 0.0 || value > 100.0) {
      return std::string(
          "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]");
    }
  }
  return std::nullopt;
}

// A replica of another server would not hold locks of its own: only "no one" is accepted.
IgnoredReason CheckReplicaof(const Args& args) {
  if (args.size() != 3) return WrongArgumentCount();
  if (EqualsIgnoreCase(args[1], "no") && EqualsIgnoreCase(args[2], "one")) return std::nullopt;
  return std::string("latchd does not replicate: only 'replicaof no one' is accepted");
}

// Redis 7 accepts the percent form (e.g. 10%) as a share of maxmemory.
IgnoredReason CheckMaxmemoryClients(const Args& args) {
  if (args.size() != 2) return WrongArgumentCount();
  const std::string& value = args[1];
  if (!value.empty() && value.back() == '%') {
    const std::optional<std::int64_t> percent =
        ParseStrictInteger(std::string_view(value).substr(0, value.size() - 1));
    if (!percent || *percent < 0) return std::string("argument must be a memory or percent value");
    if (*percent > 100) return std::string("percentage argument must be less or equal to 100");
    return std::nullopt;
  }
  if (!ParseMemory(value)) return std::string("argument must be a memory or percent value");
  return std::nullopt;
}

template <const char* kReason>
IgnoredReason CheckFileName(const Args& args) {
  if (args.size() != 2) return WrongArgumentCount();
  if (args[1].find('/') != std::string::npos) return std::string(kReason);
  return std::nullopt;
}
constexpr char kDbfilenameReason[] = "dbfilename can't be a path, just a filename";

// Debian's redis-server is built without Redis's jemalloc, so it refuses this too.
IgnoredReason CheckActivedefrag(const Args& args) {
  if (args.size() != 2) return WrongArgumentCount();
  if (IgnoredReason reason = CheckYesNo(args[1])) return reason;
  if (!EqualsIgnoreCase(args[1], "yes")) return std::nullopt;
  return std::string(
      "Active defragmentation cannot be enabled: it requires a Redis server compiled with a "
      "modified Jemalloc like the one shipped by default with the Redis source distribution");
}

IgnoredReason CheckClusterEnabled(const Args& args) {
  if (args.size() != 2) return WrongArgumentCount();
  if (IgnoredReason reason = CheckYesNo(args[1])) return reason;
  if (!EqualsIgnoreCase(args[1], "yes")) return std::nullopt;
  return std::string("latchd does not run as a cluster node: cluster-enabled must be no");
}

// Renaming or removing a command is a security measure: ignoring it would re-enable the
// command, so these are refused rather than dropped.
IgnoredReason RefuseRenameCommand(const Args&) {
  return std::string("latchd does not support rename-command");
}
IgnoredReason RefuseLoadmodule(const Args&) {
  return std::string("latchd does not load Redis modules");
}
IgnoredReason RefuseSentinel(const Args&) {
  return std::string("sentinel directive while not in sentinel mode");
}
// Deprecated in Redis 7, accepted there with one argument and no effect.
IgnoredReason AcceptOneArgument(const Args& args) {
  if (args.size() != 2) return WrongArgumentCount();
  return std::nullopt;
}
IgnoredReason AcceptAnyArguments(const Args&) { return std::nullopt; }

// Redis 7.0's directives (aliases as entries of their own), less those latchd implements.
// Several entries per line, grouped by subject.
// clang-format off
constexpr std::array kIgnored = {
    // Persistence: the journal's own directives are implemented (config_directives.cpp);
    // snapshots and AOF tuning that does not apply are accepted and ignored.
    Bool("rdbchecksum"), Bool("rdbcompression"), Bool("rdb-del-sync-files"),
    Bool("stop-writes-on-bgsave-error"), Bool("rdb-save-incremental-fsync"),
    Special("dbfilename", CheckFileName<kDbfilenameReason>),
    Bool("aof-rewrite-incremental-fsync"),
    Bool("no-appendfsync-on-rewrite"), Bool("aof-use-rdb-preamble"),
    Bool("aof-disable-auto-gc"), Int("rdb-key-save-delay", kIgnoredIntMin, kIgnoredIntMax),
    Int("key-load-delay", kIgnoredIntMin, kIgnoredIntMax),
    Int("loading-process-events-interval-bytes", 1024, kIgnoredIntMax),
    Enum("sanitize-dump-payload", "no,yes,clients"),
    // Replication.
    Special("replicaof", CheckReplicaof, true), Special("slaveof", CheckReplicaof, true),
    String("masterauth"), String("masteruser"), Bool("repl-disable-tcp-nodelay"),
    Bool("repl-diskless-sync"), Int("repl-diskless-sync-delay", 0, kIgnoredIntMax),
    Int("repl-diskless-sync-max-replicas", 0, kIgnoredIntMax),
    Enum("repl-diskless-load", "disabled,on-empty-db,swapdb"),
    Memory("repl-backlog-size", 1, kIgnoredLongMax), Int("repl-backlog-ttl", 0, kIgnoredLongMax),
    Int("repl-timeout", 1, kIgnoredIntMax), Int("repl-ping-replica-period", 1, kIgnoredIntMax),
    Int("repl-ping-slave-period", 1, kIgnoredIntMax), Bool("replica-lazy-flush"),
    Bool("slave-lazy-flush"), Bool("replica-serve-stale-data"), Bool("slave-serve-stale-data"),
    Bool("replica-read-only"), Bool("slave-read-only"), Bool("replica-ignore-maxmemory"),
    Bool("slave-ignore-maxmemory"), Bool("replica-ignore-disk-write-errors"),
    Bool("replica-announced"), Int("replica-priority", 0, kIgnoredIntMax),
    Int("slave-priority", 0, kIgnoredIntMax), String("replica-announce-ip"), String("slave-announce-ip"),
    Int("replica-announce-port", 0, 65535), Int("slave-announce-port", 0, 65535),
    Int("min-replicas-to-write", 0, kIgnoredIntMax), Int("min-slaves-to-write", 0, kIgnoredIntMax),
    Int("min-replicas-max-lag", 0, kIgnoredIntMax), Int("min-slaves-max-lag", 0, kIgnoredIntMax),
    Enum("propagation-error-behavior", "ignore,panic,panic-on-replicas"),
    // Cluster and Sentinel.
    Special("cluster-enabled", CheckClusterEnabled), String("cluster-config-file"),
    Int("cluster-node-timeout", 0, kIgnoredLongMax), Int("cluster-port", 0, 65535),
    Int("cluster-replica-validity-factor", 0, kIgnoredIntMax),
    Int("cluster-slave-validity-factor", 0, kIgnoredIntMax), Int("cluster-migration-barrier", 0, kIgnoredIntMax),
    Bool("cluster-allow-replica-migration"), Bool("cluster-require-full-coverage"),
    Bool("cluster-replica-no-failover"), Bool("cluster-slave-no-failover"),
    Bool("cluster-allow-reads-when-down"), Bool("cluster-allow-pubsubshard-when-down"),
    Memory("cluster-link-sendbuf-limit", 0, kIgnoredLongMax), String("cluster-announce-hostname"),
    String("cluster-announce-ip"), Int("cluster-announce-port", 0, 65535),
    Int("cluster-announce-bus-port", 0, 65535), Int("cluster-announce-tls-port", 0, 65535),
    Enum("cluster-preferred-endpoint-type", "ip,hostname,unknown-endpoint"),
    Special("sentinel", RefuseSentinel, true),
    // Memory management of Redis's allocator and data types latchd does not have.
    Bool("lazyfree-lazy-eviction"), Bool("lazyfree-lazy-expire"), Bool("lazyfree-lazy-server-del"),
    Bool("lazyfree-lazy-user-del"), Bool("lazyfree-lazy-user-flush"), Bool("activerehashing"),
    Special("activedefrag", CheckActivedefrag), Int("active-defrag-cycle-min", 1, 99),
    Int("active-defrag-cycle-max", 1, 99), Int("active-defrag-threshold-lower", 0, 1000),
    Int("active-defrag-threshold-upper", 0, 1000), Memory("active-defrag-ignore-bytes", 1, kIgnoredLongMax),
    Int("active-defrag-max-scan-fields", 1, kIgnoredLongMax), Bool("jemalloc-bg-thread"),
    Int("maxmemory-samples", 1, kIgnoredIntMax), Int("maxmemory-eviction-tenacity", 0, 100),
    Special("maxmemory-clients", CheckMaxmemoryClients), Int("lfu-log-factor", 0, kIgnoredIntMax),
    Int("lfu-decay-time", 0, kIgnoredIntMax), Int("active-expire-effort", 1, 10), Bool("dynamic-hz"),
    Int("hash-max-listpack-entries", 0, kIgnoredLongMax), Int("hash-max-ziplist-entries", 0, kIgnoredLongMax),
    Memory("hash-max-listpack-value", 0, kIgnoredLongMax), Memory("hash-max-ziplist-value", 0, kIgnoredLongMax),
    Int("list-max-listpack-size", kIgnoredIntMin, kIgnoredIntMax), Int("list-max-ziplist-size", kIgnoredIntMin, kIgnoredIntMax),
    Int("list-compress-depth", 0, kIgnoredIntMax), Int("set-max-intset-entries", 0, kIgnoredLongMax),
    Int("zset-max-listpack-entries", 0, kIgnoredLongMax), Int("zset-max-ziplist-entries", 0, kIgnoredLongMax),
    Memory("zset-max-listpack-value", 0, kIgnoredLongMax), Memory("zset-max-ziplist-value", 0, kIgnoredLongMax),
    Memory("hll-sparse-max-bytes", 0, kIgnoredLongMax), Memory("stream-node-max-bytes", 0, kIgnoredLongMax),
    Int("stream-node-max-entries", 0, kIgnoredLongMax), Special("list-max-ziplist-entries", AcceptOneArgument),
    Special("list-max-ziplist-value", AcceptOneArgument),
    // Process, OS and diagnostics.
    Bool("always-show-logo"), Bool("set-proc-title"), String("proc-title-template"),
    Bool("disable-thp"), Enum("oom-score-adj", "no,yes,relative,absolute"),
    Special("oom-score-adj-values", CheckOomScoreAdjValues, true), String("server_cpulist"),
    String("bio_cpulist"), String("aof_rewrite_cpulist"), String("bgsave_cpulist"),
    Bool("crash-log-enabled"), Bool("crash-memcheck-enabled"), Bool("use-exit-on-panic"),
    String("ignore-warnings"), Int("watchdog-period", 0, kIgnoredIntMax), Int("shutdown-timeout", 0, kIgnoredIntMax),
    Special("shutdown-on-sigint", AcceptAnyArguments, true),
    Special("shutdown-on-sigterm", AcceptAnyArguments, true), String("bind-source-addr"),
    Int("socket-mark-id", 0, kIgnoredIntMax),
    // Observability: the percentiles INFO latencystats shows are fixed at 50, 99, 99.9.
    Special("latency-tracking-info-percentiles", CheckLatencyPercentiles, true),
    Special("notify-keyspace-events", CheckNotifyKeyspaceEvents),
    Int("tracking-table-max-keys", 0, kIgnoredLongMax),
    // Clients, databases, scripting.
    Special("lua-replicate-commands", AcceptOneArgument),
    Enum("enable-module-command", "no,yes,local"),
    Special("loadmodule", RefuseLoadmodule, true), Special("rename-command", RefuseRenameCommand, true),
    // ACL: the log's length (ACL LOG keeps no entries) and the default for new users'
    // channels are accepted.
    Int("acllog-max-len", 0, kIgnoredLongMax), Enum("acl-pubsub-default", "allchannels,resetchannels"),
    // TLS for replication and cluster links, and the client certificate latchd would present
    // on them: latchd makes no outgoing connections (its TLS directives are real ones).
    Bool("tls-cluster"), Bool("tls-replication"), String("tls-client-cert-file"),
    String("tls-client-key-file"), String("tls-client-key-file-pass"),
};
// clang-format on

IgnoredReason EnumReason(std::string_view choices) {
  std::string reason = "argument(s) must be one of the following: ";
  for (char c : choices) reason += c == ',' ? std::string(", ") : std::string(1, c);
  return reason;
}

bool InChoices(std::string_view value, std::string_view choices) {
  while (!choices.empty()) {
    const std::size_t comma = choices.find(',');
    if (EqualsIgnoreCase(value, choices.substr(0, comma))) return true;
    choices = comma == std::string_view::npos ? std::string_view() : choices.substr(comma + 1);
  }
  return false;
}

}  // namespace

std::span<const IgnoredDirective> IgnoredDirectives() { return kIgnored; }

const IgnoredDirective* FindIgnoredDirective(std::string_view name) {
  for (const IgnoredDirective& directive : kIgnored) {
    if (EqualsIgnoreCase(directive.name, name)) return &directive;
  }
  return nullptr;
}

std::optional<std::string> CheckIgnoredDirective(const IgnoredDirective& directive,
                                                 const std::vector<std::string>& args) {
  if (directive.kind == Kind::kSpecial) return directive.check(args);
  if (args.size() != 2) return WrongArgumentCount();
  const std::string& value = args[1];
  switch (directive.kind) {
    case Kind::kBool:
      return CheckYesNo(value);
    case Kind::kInteger: {
      const Parsed<std::int64_t> parsed = ParseIntegerInRange(value, directive.min, directive.max);
      if (const auto* reason = std::get_if<std::string>(&parsed)) return *reason;
      return std::nullopt;
    }
    case Kind::kMemory: {
      const Parsed<std::int64_t> parsed = ParseMemoryInRange(value, directive.min, directive.max);
      if (const auto* reason = std::get_if<std::string>(&parsed)) return *reason;
      return std::nullopt;
    }
    case Kind::kEnum:
      if (InChoices(value, directive.choices)) return std::nullopt;
      return EnumReason(directive.choices);
    case Kind::kString:
    case Kind::kSpecial:
      break;
  }
  return std::nullopt;
}

}  // namespace latch::config
