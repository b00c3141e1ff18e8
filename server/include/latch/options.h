#pragma once
// Server settings: the directives of latchd.conf, with redis.conf's names and defaults.
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace latch {

class Clock;

struct Options {
  // Addresses separated by spaces, as redis.conf's bind; "-" before one makes it optional.
  std::string bind = "127.0.0.1";
  int port = 6380;            // 0 = pick a free port (Server::start() returns it)
  int metrics_port = 0;       // Prometheus GET /metrics on the first bind address; 0 = off
  // Upstash-compatible REST endpoint (HTTP/1.1, server/src/rest/): port 0 = off; bind empty =
  // the addresses of `bind`. Requests run as ACL users (rest/rest_auth.h): a request bearing
  // rest_token (when set) runs as the ACL user rest_user; passwords work as AUTH's.
  int rest_port = 0;
  std::string rest_bind;
  std::string rest_token;
  std::string rest_user = "default";
  int io_threads = 0;         // 0 = one per hardware thread
  // How the io threads do the plain client connections' I/O: "epoll" (Asio's reactor) or
  // "uring" (one io_uring per io thread; TLS, REST and /metrics stay on Asio). Start-up only;
  // `uring` on a kernel that refuses io_uring stops the start (docs/design/io_engine.md).
  std::string io_engine = "epoll";
  int shards = 0;             // power of two; 0 = 16 per io thread, rounded up
  std::string requirepass;    // empty = no password
  // ACL users: each `user` directive's text ("alice on >pw ~lock:* +@lock"), in file order,
  // and the aclfile path (ACL LOAD/SAVE); applied at start by acl/acl_file.h.
  std::vector<std::string> acl_users;
  std::string aclfile;
  int maxclients = 10000;
  int databases = 16;         // SELECT 0..databases-1 (store/keyspace_set.h)
  int timeout = 0;            // idle seconds before a client is closed; 0 = never
  std::int64_t proto_max_bulk_len = 512LL * 1024 * 1024;
  std::int64_t client_query_buffer_limit = 1024LL * 1024 * 1024;
  // client-output-buffer-limit as redis.conf, per class (normal, replica, pubsub): a client
  // is closed when its pending replies reach `hard` bytes, or stay at or over `soft` bytes
  // for more than `soft_seconds` (0 = off). normal and pubsub (a client with a subscription)
  // apply; replica is kept so that CONFIG GET shows what was set (latchd has no replicas).
  struct OutputBufferLimit {
    std::uint64_t hard = 0;
    std::uint64_t soft = 0;
    std::int64_t soft_seconds = 0;
  };
  std::array<OutputBufferLimit, 3> client_output_buffer_limit = {
      OutputBufferLimit{0, 0, 0}, OutputBufferLimit{256ULL << 20, 64ULL << 20, 60},
      OutputBufferLimit{32ULL << 20, 8ULL << 20, 60}};
  std::string loglevel = "notice";  // debug | verbose | notice | warning | nothing
  std::string logfile;              // empty = standard output
  // enable-debug-command: no (both false), yes (enable_debug_command), local
  // (enable_debug_command_local: DEBUG only from loopback or Unix-socket clients).
  bool enable_debug_command = false;
  bool enable_debug_command_local = false;
  // enable-protected-configs (Redis 7.0, default no): CONFIG SET of `dir` is refused ("can't
  // set protected config") unless yes, or local and the client is on loopback or the Unix
  // socket. `dir` decides where the journal's files are written: the way into writing files
  // elsewhere on the host that Redis closed.
  bool enable_protected_configs = false;
  bool enable_protected_configs_local = false;
  int hz = 10;                      // active expiry passes per second (each bounded)
  std::int64_t lua_time_limit = 5000;  // ms
  // Bytes of used memory (INFO used_memory) beyond which commands that can grow it
  // (Redis's "denyoom" ones: SET, LOCK.ACQUIRE, ...) are refused with -OOM; 0 = no limit.
  // Keys are never evicted: an evicted lock is a lost lock (maxmemory-policy noeviction).
  std::int64_t maxmemory = 0;

  // Running as a service (latchd's main(); an embedded Server ignores these).
  std::string supervised = "no";  // no | upstart | systemd | auto (sd_notify READY/STOPPING)
  bool daemonize = false;         // fork into the background, as redis-server does
  std::string pidfile;            // written at start-up, removed at exit; empty = none
  std::string dir;                // working directory (chdir at start-up); empty = unchanged
  bool syslog_enabled = false;    // log lines also go to syslog(3)
  std::string syslog_ident = "latchd";
  std::string syslog_facility = "local0";  // user | local0 .. local7

  // Listening.
  // No password and a client that is not on the loopback interface: the client is told
  // Redis's -DENIED text and closed (Redis 7's rule; the bind address does not matter).
  bool protected_mode = true;
  int tcp_backlog = 511;          // listen(2) backlog
  int tcp_keepalive = 300;        // seconds of SO_KEEPALIVE idle time on clients; 0 = off
  // The configuration file latchd was started with (absolute), for CONFIG REWRITE; empty
  // when there was none (or it came from standard input).
  std::string config_file;
  std::string unixsocket;         // also listen on this Unix socket path; empty = no
  int unixsocketperm = 0;         // its file mode (octal in the config); 0 = as umask leaves it

  // Operating (commands/slowlog.cpp, commands/command_stats.cpp).
  std::int64_t slowlog_log_slower_than = 10000;  // microseconds; negative: off; 0: every command
  std::int64_t slowlog_max_len = 128;
  std::int64_t latency_monitor_threshold = 0;  // ms; LATENCY events are recorded only if > 0
  bool latency_tracking = true;                // INFO latencystats percentiles

  // TLS, with redis.conf's tls-* directives and defaults (server/src/net/tls_context.cpp).
  // tls_port 0 = off; -1 (embedding only) = a free port, see Server::tls_port(). With a TLS
  // port set, port 0 means no plain listener, as in Redis (an embedded server that wants
  // both on free ports sets tls_port -1).
  int tls_port = 0;
  std::string tls_cert_file, tls_key_file, tls_key_file_pass;
  std::string tls_ca_cert_file, tls_ca_cert_dir;
  std::string tls_auth_clients = "yes";  // yes | no | optional (certificate checked if sent)
  std::string tls_protocols;             // e.g. "TLSv1.2 TLSv1.3" (also the default when empty)
  std::string tls_ciphers, tls_ciphersuites, tls_dh_params_file;
  bool tls_prefer_server_ciphers = false;
  bool tls_session_caching = true;
  int tls_session_cache_size = 20 * 1024;
  int tls_session_cache_timeout = 300;  // seconds
  // latchd's own: a client must finish its handshake within this many ms or is closed, so a
  // socket that connects and sends nothing cannot hold a client slot (Redis waits for timeout).
  int tls_handshake_timeout = 10000;

  // The spdlog logger the server writes to. If the host registered one under this name
  // (spdlog::register_logger; latchd registers its own), the server uses it; otherwise it
  // makes its own, writing Redis-style lines to stderr, neither registered nor made the
  // default: an embedded server never writes through or into the host's loggers. loglevel
  // (and CONFIG SET loglevel) sets this logger's level; "nothing" silences it.
  std::string logger_name = "latch";
  // Durability (docs/LOCKS.md): the journal, with Redis's AOF directives and defaults, and
  // the delayed restart. appendfsync: 0 always, 1 everysec, 2 no.
  bool appendonly = false;
  std::string appenddirname = "appendonlydir";
  std::string appendfilename = "appendonly.aof";
  int appendfsync = 1;
  int auto_aof_rewrite_percentage = 100;
  std::int64_t auto_aof_rewrite_min_size = 64LL * 1024 * 1024;
  bool aof_load_truncated = true;
  bool aof_timestamp_enabled = false;
  std::int64_t lock_restart_delay = 0;  // ms after start during which no lock is granted

  // Raft cluster (docs/CLUSTER.md, server/src/cluster/): with raft_peers empty latchd is the
  // single node it always was. raft_peers: "ID=HOST:RAFTPORT:CLIENTPORT ..." (the first
  // membership, this node included); raft_addr: this node's Raft address (empty: its entry in
  // raft_peers); raft_dir: the Raft log (empty: "raft" under `dir`). Checked at start-up
  // (cluster/raft_config.h).
  std::uint64_t raft_id = 0;
  std::string raft_addr;
  std::string raft_peers;
  std::string raft_dir;
  std::int64_t raft_election_timeout = 1000;   // ms
  std::int64_t raft_heartbeat_interval = 100;  // ms
  // Entries applied between two snapshots, and entries kept in the log behind one (so that a
  // follower a little behind catches up from the log, not a snapshot). docs/CLUSTER.md.
  std::int64_t raft_snapshot_threshold = 8192;
  std::int64_t raft_snapshot_trailing = 8192;
  // How long the leader waits for a follower to install its snapshot before it sends it again
  // (ms). libraft's own default, 30 s, stalled commits for 30 s when the snapshot went to a
  // follower that was killed meanwhile and another follower also needed one (docs/CLUSTER.md).
  std::int64_t raft_install_snapshot_timeout = 5000;
  bool raft_leader_probe = true;  // docs/CLUSTER.md, "Failover"
  // The master name a cluster node answers SENTINEL for (cluster discovery, docs/CLUSTER.md).
  std::string raft_sentinel_name = "latch";

  // Test mode (docs/TESTING.md): the TEST.* commands (clock, faults, reset) and per-command
  // counts. latchd refuses to start with it unless every bind address is loopback.
  bool enable_test_commands = false;
  // latchd's `clock` directive: "system", or "manual" (a ManualClock that only TEST.CLOCK
  // moves, starting at the current time). An embedder sets `clock` below instead.
  std::string clock_source = "system";

  // Time source; null = the system clocks. Tests inject a ManualClock.
  std::shared_ptr<Clock> clock;
};

}  // namespace latch
