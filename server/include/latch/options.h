#pragma once
// Server settings: the directives of latchd.conf, with redis.conf's names and defaults.
#include <cstdint>
#include <memory>
#include <string>

namespace latch {

class Clock;

struct Options {
  // Addresses separated by spaces, as redis.conf's bind; "-" before one makes it optional.
  std::string bind = "127.0.0.1";
  int port = 6380;            // 0 = pick a free port (Server::start() returns it)
  int metrics_port = 0;       // Prometheus GET /metrics on the first bind address; 0 = off
  int io_threads = 0;         // 0 = one per hardware thread
  int shards = 0;             // power of two; 0 = 16 per io thread, rounded up
  std::string requirepass;    // empty = no password
  int maxclients = 10000;
  int timeout = 0;            // idle seconds before a client is closed; 0 = never
  std::int64_t proto_max_bulk_len = 512LL * 1024 * 1024;
  std::int64_t client_query_buffer_limit = 1024LL * 1024 * 1024;
  std::string loglevel = "notice";  // debug | verbose | notice | warning | nothing
  std::string logfile;              // empty = standard output
  // enable-debug-command: no (both false), yes (enable_debug_command), local
  // (enable_debug_command_local: DEBUG only from loopback or Unix-socket clients).
  bool enable_debug_command = false;
  bool enable_debug_command_local = false;
  int hz = 10;                      // active expiry passes per second (each bounded)
  std::int64_t lua_time_limit = 5000;  // ms
  // Bytes of used memory (INFO used_memory) beyond which commands that can grow it
  // (Redis's "denyoom" ones: SET, LOCK.ACQUIRE, ...) are refused with -OOM; 0 = no limit.
  // Keys are never evicted: an evicted lock is a lost lock (maxmemory-policy noeviction).
  std::int64_t maxmemory = 0;

  // Durability (docs/LOCKS.md): the journal, with Redis's AOF directives and defaults, and
  // the delayed restart. appendfsync: 0 always, 1 everysec, 2 no.
  bool appendonly = false;
  std::string dir = ".";
  std::string appenddirname = "appendonlydir";
  std::string appendfilename = "appendonly.aof";
  int appendfsync = 1;
  int auto_aof_rewrite_percentage = 100;
  std::int64_t auto_aof_rewrite_min_size = 64LL * 1024 * 1024;
  bool aof_load_truncated = true;
  bool aof_timestamp_enabled = false;
  std::int64_t lock_restart_delay = 0;  // ms after start during which no lock is granted

  // Time source; null = the system clocks. Tests inject a ManualClock.
  std::shared_ptr<Clock> clock;
};

}  // namespace latch
