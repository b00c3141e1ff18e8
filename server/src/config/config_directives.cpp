#include "config/config_directives.h"

#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <boost/asio/ip/address.hpp>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <variant>
#include <vector>

#include "config/config_values.h"
#include "config/output_buffer_limit.h"
#include "config/raft_peers.h"
#include "config/tls_directives.h"
#include "store/object.h"

namespace latch::config {
namespace {

using SetResult = std::optional<std::string>;
constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();
constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kOneMb = 1024 * 1024;
// A key or value lives in one block with 31-bit lengths (store/object.h; the 32nd bit marks a
// fencing token): a bulk argument can be at most 2 GiB - 1 bytes. Redis allows more; latchd
// refuses it at configuration time instead of truncating a value later.
constexpr std::int64_t kMaxBulkLen = static_cast<std::int64_t>(store::Object::kMaxLength);

// Redis clamps hz into [1, 500] after accepting any value in [0, INT_MAX].
constexpr int kMinHz = 1;
constexpr int kMaxHz = 500;
constexpr std::int64_t kMaxShards = 4096;
constexpr std::int64_t kMaxIoThreads = 128;
// Redis's maxclients range; Options keeps an int, so larger values are stored as INT_MAX (far
// beyond any file-descriptor limit anyway).
constexpr std::int64_t kMaxClients = 4294967295LL;

template <typename T>
const std::string* Reason(const Parsed<T>& parsed) {
  return std::get_if<std::string>(&parsed);
}

template <auto Member>
std::string GetNumber(const Options& o) {
  return std::to_string(o.*Member);
}

template <auto Member>
std::string GetString(const Options& o) {
  return o.*Member;
}

template <auto Member, std::int64_t Min, std::int64_t Max>
SetResult SetInteger(Options& o, std::string_view value) {
  const Parsed<std::int64_t> parsed = ParseIntegerInRange(value, Min, Max);
  if (const std::string* reason = Reason(parsed)) return *reason;
  using Field = std::remove_reference_t<decltype(o.*Member)>;
  o.*Member = static_cast<Field>(std::get<std::int64_t>(parsed));
  return std::nullopt;
}

template <auto Member, std::int64_t Min, std::int64_t Max>
SetResult SetMemory(Options& o, std::string_view value) {
  const Parsed<std::int64_t> parsed = ParseMemoryInRange(value, Min, Max);
  if (const std::string* reason = Reason(parsed)) return *reason;
  o.*Member = std::get<std::int64_t>(parsed);
  return std::nullopt;
}

template <auto Member>
SetResult SetString(Options& o, std::string_view value) {
  o.*Member = std::string(value);
  return std::nullopt;
}

// `user` may appear many times: each line adds a user (acl/acl_file.cpp parses the rules at
// start). CONFIG GET shows nothing, as Redis has no such parameter.
std::string GetAclUsers(const Options&) { return ""; }
SetResult AddAclUser(Options& o, std::string_view value) {
  o.acl_users.emplace_back(value);
  return std::nullopt;
}

// Redis's form: up to 16 addresses separated by spaces, each optionally prefixed by '-'
// (skipped at start-up when the address is not available, e.g. ::1 without IPv6).
SetResult SetBind(Options& o, std::string_view value) {
  const std::vector<BindAddress> addresses = SplitBindAddresses(value);
  if (addresses.empty()) return std::string("argument must be an address, not empty");
  if (addresses.size() > kMaxBindAddresses) return std::string("Too many bind addresses specified.");
  for (const BindAddress& a : addresses) {
    boost::system::error_code ec;
    boost::asio::ip::make_address(ListenAddress(a), ec);
    if (ec) return "'" + a.address + "' is not an IP address";
  }
  std::string joined;
  for (const BindAddress& a : addresses) {
    if (!joined.empty()) joined += ' ';
    if (a.optional) joined += '-';
    joined += a.address;
  }
  o.bind = std::move(joined);
  return std::nullopt;
}

// raft-peers: every member well-formed and no id or address twice; the rest (this node among
// them, host names) is checked at start-up (cluster/raft_config.h).
SetResult SetRaftPeers(Options& o, std::string_view value) {
  std::vector<PeerSpec> peers;
  if (!value.empty()) {
    if (SetResult reason = ParsePeers(value, &peers)) return reason;
  }
  o.raft_peers = std::string(value);
  return std::nullopt;
}

// raft-sentinel-name: the name clients give Sentinel (master_for('latch')); an empty one or
// one with spaces could not be asked for.
SetResult SetSentinelName(Options& o, std::string_view value) {
  if (value.empty() || value.find_first_of(" \t\r\n") != std::string_view::npos) {
    return std::string("raft-sentinel-name must be one word");
  }
  o.raft_sentinel_name = std::string(value);
  return std::nullopt;
}

// rest-bind: bind's syntax; empty means "the addresses of bind".
SetResult SetRestBind(Options& o, std::string_view value) {
  Options parsed;
  if (!value.empty()) {
    if (SetResult reason = SetBind(parsed, value)) return reason;
  }
  o.rest_bind = value.empty() ? std::string() : parsed.bind;
  return std::nullopt;
}

SetResult SetShards(Options& o, std::string_view value) {
  const Parsed<std::int64_t> parsed = ParseIntegerInRange(value, 0, kMaxShards);
  if (const std::string* reason = Reason(parsed)) return *reason;
  const std::int64_t shards = std::get<std::int64_t>(parsed);
  if ((shards & (shards - 1)) != 0) {
    return std::string("argument must be 0 (automatic) or a power of two");
  }
  o.shards = static_cast<int>(shards);
  return std::nullopt;
}

SetResult SetMaxclients(Options& o, std::string_view value) {
  const Parsed<std::int64_t> parsed = ParseIntegerInRange(value, 1, kMaxClients);
  if (const std::string* reason = Reason(parsed)) return *reason;
  const std::int64_t maxclients = std::get<std::int64_t>(parsed);
  o.maxclients = static_cast<int>(maxclients > kIntMax ? kIntMax : maxclients);
  return std::nullopt;
}

SetResult SetHz(Options& o, std::string_view value) {
  const Parsed<std::int64_t> parsed = ParseIntegerInRange(value, 0, kIntMax);
  if (const std::string* reason = Reason(parsed)) return *reason;
  const std::int64_t hz = std::get<std::int64_t>(parsed);
  o.hz = static_cast<int>(hz < kMinHz ? kMinHz : (hz > kMaxHz ? kMaxHz : hz));
  return std::nullopt;
}

constexpr std::array<std::string_view, 5> kLogLevels = {"debug", "verbose", "notice", "warning",
                                                        "nothing"};

SetResult SetLoglevel(Options& o, std::string_view value) {
  const Parsed<int> parsed =
      ParseEnum(value, {kLogLevels[0], kLogLevels[1], kLogLevels[2], kLogLevels[3], kLogLevels[4]});
  if (const std::string* reason = Reason(parsed)) return *reason;
  o.loglevel = std::string(kLogLevels[static_cast<std::size_t>(std::get<int>(parsed))]);
  return std::nullopt;
}

// enable-debug-command and enable-protected-configs: no | yes | local, in two flags.
template <bool Options::*Yes, bool Options::*Local>
std::string GetProtectedAction(const Options& o) {
  if (o.*Yes) return "yes";
  return o.*Local ? "local" : "no";
}

template <bool Options::*Yes, bool Options::*Local>
SetResult SetProtectedAction(Options& o, std::string_view value) {
  // Redis 7 lists them in this order in its reason.
  const Parsed<int> parsed = ParseEnum(value, {"no", "yes", "local"});
  if (const std::string* reason = Reason(parsed)) return *reason;
  const int choice = std::get<int>(parsed);
  o.*Yes = choice == 1;
  o.*Local = choice == 2;
  return std::nullopt;
}

// io-engine: epoll | uring (net/uring_ring.h); whether the kernel allows io_uring is checked at
// start-up, where it stops a server that asked for uring.
SetResult SetIoEngine(Options& o, std::string_view value) {
  const Parsed<int> parsed = ParseEnum(value, {"epoll", "uring"});
  if (const std::string* reason = Reason(parsed)) return *reason;
  o.io_engine = std::get<int>(parsed) == 0 ? "epoll" : "uring";
  return std::nullopt;
}

// clock: system | manual (testing/test_mode.cpp makes the ManualClock at start-up).
SetResult SetClockSource(Options& o, std::string_view value) {
  const Parsed<int> parsed = ParseEnum(value, {"system", "manual"});
  if (const std::string* reason = Reason(parsed)) return *reason;
  o.clock_source = std::get<int>(parsed) == 0 ? "system" : "manual";
  return std::nullopt;
}

// latchd has no RDB snapshots: `save` exists so that tools which read or switch it off
// (redis-benchmark reads it; test suites run `--save ''`) get Redis's answer; any value that
// asks for snapshots is refused. The journal (appendonly) is the persistence latchd offers.
std::string GetSave(const Options&) { return ""; }
SetResult SetSave(Options&, std::string_view value) {
  if (value.empty()) return std::nullopt;
  return std::string("latchd does not write RDB snapshots: only an empty save policy is "
                     "accepted (use appendonly yes)");
}

template <auto Member>
std::string GetYesNo(const Options& o) {
  return o.*Member ? "yes" : "no";
}

template <auto Member>
SetResult SetYesNo(Options& o, std::string_view value) {
  const Parsed<bool> parsed = ParseYesNo(value);
  if (const std::string* reason = Reason(parsed)) return *reason;
  o.*Member = std::get<bool>(parsed);
  return std::nullopt;
}

constexpr std::array<std::string_view, 3> kFsyncPolicies = {"always", "everysec", "no"};
std::string GetAppendfsync(const Options& o) {
  return std::string(kFsyncPolicies[static_cast<std::size_t>(o.appendfsync)]);
}
SetResult SetAppendfsync(Options& o, std::string_view value) {
  // Listed in Redis's order, which its error text shows: everysec, always, no.
  const Parsed<int> parsed = ParseEnum(value, {kFsyncPolicies[1], kFsyncPolicies[0], kFsyncPolicies[2]});
  if (const std::string* reason = Reason(parsed)) return *reason;
  constexpr int kByRedisOrder[] = {1, 0, 2};
  o.appendfsync = kByRedisOrder[std::get<int>(parsed)];
  return std::nullopt;
}

// A file name inside the AOF directory, as Redis checks appendfilename / appenddirname.
template <auto Member>
SetResult SetPlainFileName(Options& o, std::string_view value) {
  if (value.empty() || value.find('/') != std::string_view::npos || value == "." || value == "..") {
    return std::string("appendfilename can't be a path, just a filename");
  }
  o.*Member = std::string(value);
  return std::nullopt;
}

// Redis's policies are all recognised so that a redis.conf reads with a clear reason; only
// noeviction is accepted: evicting a key would silently free someone's lock.
std::string GetMaxmemoryPolicy(const Options&) { return "noeviction"; }
SetResult SetMaxmemoryPolicy(Options&, std::string_view value) {
  const Parsed<int> parsed =
      ParseEnum(value, {"volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl",
                        "allkeys-lru", "allkeys-lfu", "allkeys-random", "noeviction"});
  if (const std::string* reason = Reason(parsed)) return *reason;
  if (std::get<int>(parsed) == 7) return std::nullopt;
  return std::string(
      "latchd never evicts keys (an evicted lock is a lost lock): only noeviction is supported");
}

constexpr std::array<std::string_view, 4> kSupervisedModes = {"upstart", "systemd", "auto", "no"};
SetResult SetSupervised(Options& o, std::string_view value) {
  const Parsed<int> parsed = ParseEnum(value, {kSupervisedModes[0], kSupervisedModes[1],
                                               kSupervisedModes[2], kSupervisedModes[3]});
  if (const std::string* reason = Reason(parsed)) return *reason;
  o.supervised = std::string(kSupervisedModes[static_cast<std::size_t>(std::get<int>(parsed))]);
  return std::nullopt;
}

SetResult SetSyslogFacility(Options& o, std::string_view value) {
  const Parsed<int> parsed = ParseEnum(value, {"user", "local0", "local1", "local2", "local3",
                                               "local4", "local5", "local6", "local7"});
  if (const std::string* reason = Reason(parsed)) return *reason;
  o.syslog_facility = ToLower(value);
  return std::nullopt;
}

// Redis changes directory while it reads the file, so a bad dir is a config error with the
// system's reason (chdir's: missing, not a directory, not searchable); main() makes the change
// before it opens the log or writes the pid file, CONFIG SET in Persistence::ApplyConfig.
SetResult SetDir(Options& o, std::string_view value) {
  struct stat st {};
  const std::string path(value);
  if (::stat(path.c_str(), &st) != 0) return std::string(std::strerror(errno));
  if (!S_ISDIR(st.st_mode)) return std::string(std::strerror(ENOTDIR));
  if (::access(path.c_str(), X_OK) != 0) return std::string(std::strerror(errno));
  o.dir = path;
  return std::nullopt;
}

// Redis shows the working directory, whatever the file said.
std::string GetDir(const Options&) {
  std::error_code ec;
  std::string cwd = std::filesystem::current_path(ec).string();
  return ec ? std::string() : cwd;
}

// unixsocketperm: octal, as Redis reads and shows it.
std::string GetOctal(const Options& o) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%o", static_cast<unsigned>(o.unixsocketperm));
  return buf;
}
SetResult SetUnixsocketPerm(Options& o, std::string_view value) {
  const std::string text(value);
  char* end = nullptr;
  const long mode = std::strtol(text.c_str(), &end, 8);
  if (text.empty() || *end != '\0' || mode < 0) {
    return std::string("argument couldn't be parsed as an octal number");
  }
  if (mode > 0777) return std::string("argument must be between 0 and 511 inclusive");
  o.unixsocketperm = static_cast<int>(mode);
  return std::nullopt;
}

constexpr std::int64_t kLongLongMax = std::numeric_limits<long long>::max();

constexpr std::array kDirectives = {
    ConfigDirective{"bind", GetString<&Options::bind>, SetBind, false, true},
    ConfigDirective{"port", GetNumber<&Options::port>, SetInteger<&Options::port, 0, 65535>, false},
    ConfigDirective{"metrics-port", GetNumber<&Options::metrics_port>,
                    SetInteger<&Options::metrics_port, 0, 65535>, false},
    ConfigDirective{"rest-port", GetNumber<&Options::rest_port>,
                    SetInteger<&Options::rest_port, 0, 65535>, false},
    ConfigDirective{"rest-bind", GetString<&Options::rest_bind>, SetRestBind, false, true},
    ConfigDirective{"rest-token", GetString<&Options::rest_token>, SetString<&Options::rest_token>,
                    true},
    ConfigDirective{"rest-user", GetString<&Options::rest_user>, SetString<&Options::rest_user>,
                    true},
    ConfigDirective{"io-threads", GetNumber<&Options::io_threads>,
                    SetInteger<&Options::io_threads, 0, kMaxIoThreads>, false},
    ConfigDirective{"io-engine", GetString<&Options::io_engine>, SetIoEngine, false},
    ConfigDirective{"shards", GetNumber<&Options::shards>, SetShards, false},
    ConfigDirective{"requirepass", GetString<&Options::requirepass>,
                    SetString<&Options::requirepass>, true},
    ConfigDirective{"aclfile", GetString<&Options::aclfile>, SetString<&Options::aclfile>, false},
    ConfigDirective{"user", GetAclUsers, AddAclUser, false, true},
    ConfigDirective{"maxclients", GetNumber<&Options::maxclients>, SetMaxclients, true},
    ConfigDirective{"databases", GetNumber<&Options::databases>,
                    SetInteger<&Options::databases, 1, kIntMax>, false},
    ConfigDirective{"timeout", GetNumber<&Options::timeout>,
                    SetInteger<&Options::timeout, 0, kIntMax>, true},
    ConfigDirective{"proto-max-bulk-len", GetNumber<&Options::proto_max_bulk_len>,
                    SetMemory<&Options::proto_max_bulk_len, kOneMb, kMaxBulkLen>, true},
    ConfigDirective{"client-query-buffer-limit", GetNumber<&Options::client_query_buffer_limit>,
                    SetMemory<&Options::client_query_buffer_limit, kOneMb, kInt64Max>, true},
    ConfigDirective{"client-output-buffer-limit", GetClientOutputBufferLimit,
                    SetClientOutputBufferLimit, true, true},
    ConfigDirective{"loglevel", GetString<&Options::loglevel>, SetLoglevel, true},
    ConfigDirective{"logfile", GetString<&Options::logfile>, SetString<&Options::logfile>, false},
    ConfigDirective{
        "enable-debug-command",
        GetProtectedAction<&Options::enable_debug_command, &Options::enable_debug_command_local>,
        SetProtectedAction<&Options::enable_debug_command, &Options::enable_debug_command_local>,
        false},
    ConfigDirective{"enable-protected-configs",
                    GetProtectedAction<&Options::enable_protected_configs,
                                       &Options::enable_protected_configs_local>,
                    SetProtectedAction<&Options::enable_protected_configs,
                                       &Options::enable_protected_configs_local>,
                    false},
    // Test mode (docs/TESTING.md): start-up only.
    ConfigDirective{"enable-test-commands", GetYesNo<&Options::enable_test_commands>,
                    SetYesNo<&Options::enable_test_commands>, false},
    ConfigDirective{"clock", GetString<&Options::clock_source>, SetClockSource, false},
    ConfigDirective{"hz", GetNumber<&Options::hz>, SetHz, true},
    ConfigDirective{"lua-time-limit", GetNumber<&Options::lua_time_limit>,
                    SetInteger<&Options::lua_time_limit, 0, kInt64Max>, true},
    // Redis 7's name for lua-time-limit (both are listed by CONFIG GET *, as in Redis).
    ConfigDirective{"busy-reply-threshold", GetNumber<&Options::lua_time_limit>,
                    SetInteger<&Options::lua_time_limit, 0, kInt64Max>, true},
    ConfigDirective{"maxmemory", GetNumber<&Options::maxmemory>,
                    SetMemory<&Options::maxmemory, 0, kInt64Max>, true},
    ConfigDirective{"maxmemory-policy", GetMaxmemoryPolicy, SetMaxmemoryPolicy, true},
    ConfigDirective{"save", GetSave, SetSave, true},
    ConfigDirective{"protected-mode", GetYesNo<&Options::protected_mode>,
                    SetYesNo<&Options::protected_mode>, true},
    ConfigDirective{"tcp-backlog", GetNumber<&Options::tcp_backlog>,
                    SetInteger<&Options::tcp_backlog, 0, kIntMax>, false},
    ConfigDirective{"tcp-keepalive", GetNumber<&Options::tcp_keepalive>,
                    SetInteger<&Options::tcp_keepalive, 0, kIntMax>, true},
    // TLS (net/tls_context.cpp): any change but the port reloads the certificates for the
    // connections accepted from then on. tls-handshake-timeout (ms) is latchd's own.
    ConfigDirective{"tls-port", GetNumber<&Options::tls_port>,
                    SetInteger<&Options::tls_port, 0, 65535>, false},
    ConfigDirective{"tls-cert-file", GetString<&Options::tls_cert_file>,
                    SetString<&Options::tls_cert_file>, true},
    ConfigDirective{"tls-key-file", GetString<&Options::tls_key_file>,
                    SetString<&Options::tls_key_file>, true},
    ConfigDirective{"tls-key-file-pass", GetString<&Options::tls_key_file_pass>,
                    SetString<&Options::tls_key_file_pass>, true},
    ConfigDirective{"tls-ca-cert-file", GetString<&Options::tls_ca_cert_file>,
                    SetString<&Options::tls_ca_cert_file>, true},
    ConfigDirective{"tls-ca-cert-dir", GetString<&Options::tls_ca_cert_dir>,
                    SetString<&Options::tls_ca_cert_dir>, true},
    ConfigDirective{"tls-auth-clients", GetString<&Options::tls_auth_clients>, SetTlsAuthClients,
                    true},
    ConfigDirective{"tls-protocols", GetString<&Options::tls_protocols>,
                    SetString<&Options::tls_protocols>, true},
    ConfigDirective{"tls-ciphers", GetString<&Options::tls_ciphers>,
                    SetString<&Options::tls_ciphers>, true},
    ConfigDirective{"tls-ciphersuites", GetString<&Options::tls_ciphersuites>,
                    SetString<&Options::tls_ciphersuites>, true},
    ConfigDirective{"tls-dh-params-file", GetString<&Options::tls_dh_params_file>,
                    SetString<&Options::tls_dh_params_file>, true},
    ConfigDirective{"tls-prefer-server-ciphers", GetYesNo<&Options::tls_prefer_server_ciphers>,
                    SetYesNo<&Options::tls_prefer_server_ciphers>, true},
    ConfigDirective{"tls-session-caching", GetYesNo<&Options::tls_session_caching>,
                    SetYesNo<&Options::tls_session_caching>, true},
    ConfigDirective{"tls-session-cache-size", GetNumber<&Options::tls_session_cache_size>,
                    SetInteger<&Options::tls_session_cache_size, 0, kIntMax>, true},
    ConfigDirective{"tls-session-cache-timeout", GetNumber<&Options::tls_session_cache_timeout>,
                    SetInteger<&Options::tls_session_cache_timeout, 0, kIntMax>, true},
    ConfigDirective{"tls-handshake-timeout", GetNumber<&Options::tls_handshake_timeout>,
                    SetInteger<&Options::tls_handshake_timeout, 0, kIntMax>, true},
    ConfigDirective{"unixsocket", GetString<&Options::unixsocket>, SetString<&Options::unixsocket>,
                    false},
    ConfigDirective{"unixsocketperm", GetOctal, SetUnixsocketPerm, false},
    // Operating (SLOWLOG, LATENCY, INFO latencystats): all apply at once.
    ConfigDirective{"slowlog-log-slower-than", GetNumber<&Options::slowlog_log_slower_than>,
                    SetInteger<&Options::slowlog_log_slower_than, -1, kLongLongMax>, true},
    ConfigDirective{"slowlog-max-len", GetNumber<&Options::slowlog_max_len>,
                    SetInteger<&Options::slowlog_max_len, 0, kLongLongMax>, true},
    ConfigDirective{"latency-monitor-threshold", GetNumber<&Options::latency_monitor_threshold>,
                    SetInteger<&Options::latency_monitor_threshold, 0, kLongLongMax>, true},
    ConfigDirective{"latency-tracking", GetYesNo<&Options::latency_tracking>,
                    SetYesNo<&Options::latency_tracking>, true},
    ConfigDirective{"supervised", GetString<&Options::supervised>, SetSupervised, false},
    ConfigDirective{"daemonize", GetYesNo<&Options::daemonize>, SetYesNo<&Options::daemonize>,
                    false},
    ConfigDirective{"pidfile", GetString<&Options::pidfile>, SetString<&Options::pidfile>, false},
    ConfigDirective{"dir", GetDir, SetDir, true, false, /*protected_config=*/true},
    ConfigDirective{"syslog-enabled", GetYesNo<&Options::syslog_enabled>,
                    SetYesNo<&Options::syslog_enabled>, false},
    ConfigDirective{"syslog-ident", GetString<&Options::syslog_ident>,
                    SetString<&Options::syslog_ident>, false},
    ConfigDirective{"syslog-facility", GetString<&Options::syslog_facility>, SetSyslogFacility,
                    false},
    // Durability (journal/, docs/LOCKS.md): settable at run time where Redis 7.0 allows it;
    // appendonly turns the journal on or off (journal/toggle.cpp), the others apply at once.
    ConfigDirective{"appendonly", GetYesNo<&Options::appendonly>, SetYesNo<&Options::appendonly>,
                    true},
    ConfigDirective{"appenddirname", GetString<&Options::appenddirname>,
                    SetPlainFileName<&Options::appenddirname>, false},
    ConfigDirective{"appendfilename", GetString<&Options::appendfilename>,
                    SetPlainFileName<&Options::appendfilename>, false},
    ConfigDirective{"appendfsync", GetAppendfsync, SetAppendfsync, true},
    ConfigDirective{"auto-aof-rewrite-percentage", GetNumber<&Options::auto_aof_rewrite_percentage>,
                    SetInteger<&Options::auto_aof_rewrite_percentage, 0, kIntMax>, true},
    ConfigDirective{"auto-aof-rewrite-min-size", GetNumber<&Options::auto_aof_rewrite_min_size>,
                    SetMemory<&Options::auto_aof_rewrite_min_size, 0, kInt64Max>, true},
    ConfigDirective{"aof-load-truncated", GetYesNo<&Options::aof_load_truncated>,
                    SetYesNo<&Options::aof_load_truncated>, true},
    ConfigDirective{"aof-timestamp-enabled", GetYesNo<&Options::aof_timestamp_enabled>,
                    SetYesNo<&Options::aof_timestamp_enabled>, true},
    ConfigDirective{"lock-restart-delay", GetNumber<&Options::lock_restart_delay>,
                    SetInteger<&Options::lock_restart_delay, 0, kInt64Max>, false},
    // Raft cluster (cluster/raft_config.h, docs/CLUSTER.md): set at start-up only.
    ConfigDirective{"raft-id", GetNumber<&Options::raft_id>,
                    SetInteger<&Options::raft_id, 0, kInt64Max>, false},
    ConfigDirective{"raft-addr", GetString<&Options::raft_addr>, SetString<&Options::raft_addr>,
                    false},
    ConfigDirective{"raft-peers", GetString<&Options::raft_peers>, SetRaftPeers, false, true},
    ConfigDirective{"raft-dir", GetString<&Options::raft_dir>, SetString<&Options::raft_dir>,
                    false},
    ConfigDirective{"raft-election-timeout", GetNumber<&Options::raft_election_timeout>,
                    SetInteger<&Options::raft_election_timeout, 10, 3600000>, false},
    ConfigDirective{"raft-heartbeat-interval", GetNumber<&Options::raft_heartbeat_interval>,
                    SetInteger<&Options::raft_heartbeat_interval, 1, 3600000>, false},
    ConfigDirective{"raft-snapshot-threshold", GetNumber<&Options::raft_snapshot_threshold>,
                    SetInteger<&Options::raft_snapshot_threshold, 1, 1000000000>, false},
    ConfigDirective{"raft-snapshot-trailing", GetNumber<&Options::raft_snapshot_trailing>,
                    SetInteger<&Options::raft_snapshot_trailing, 0, 1000000000>, false},
    ConfigDirective{"raft-install-snapshot-timeout",
                    GetNumber<&Options::raft_install_snapshot_timeout>,
                    SetInteger<&Options::raft_install_snapshot_timeout, 10, 3600000>, false},
    ConfigDirective{"raft-leader-probe", GetYesNo<&Options::raft_leader_probe>,
                    SetYesNo<&Options::raft_leader_probe>, false},
    ConfigDirective{"raft-sentinel-name", GetString<&Options::raft_sentinel_name>, SetSentinelName,
                    false},
};

}  // namespace

std::span<const ConfigDirective> ConfigDirectives() { return kDirectives; }

std::string ListenAddress(const BindAddress& a) {
  if (a.address == "*") return "0.0.0.0";
  if (a.address == "::*") return "::";
  return a.address;
}

std::vector<BindAddress> SplitBindAddresses(std::string_view value) {
  std::vector<BindAddress> out;
  std::size_t i = 0;
  while (i < value.size()) {
    while (i < value.size() && value[i] == ' ') ++i;
    std::size_t end = value.find(' ', i);
    if (end == std::string_view::npos) end = value.size();
    std::string_view word = value.substr(i, end - i);
    i = end;
    if (word.empty()) continue;
    BindAddress a;
    if (word.front() == '-') {
      a.optional = true;
      word.remove_prefix(1);
    }
    a.address = std::string(word);
    out.push_back(std::move(a));
  }
  return out;
}

const ConfigDirective* FindConfigDirective(std::string_view name) {
  for (const ConfigDirective& directive : kDirectives) {
    if (EqualsIgnoreCase(directive.name, name)) return &directive;
  }
  return nullptr;
}

}  // namespace latch::config
