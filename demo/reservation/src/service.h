#pragma once
// The reservation service assembled: PostgreSQL pool and store, lock client and seat locks,
// use cases, HTTP API and server, and the sweeper that expires holds. Used by main.cpp and
// by the tests (several instances in one process). No Asio or Beast in this header.
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <memory>
#include <string>

namespace latch::demo {

struct ServiceOptions {
  std::string bind = "127.0.0.1";
  int port = 8080;                                 // 0: a free port (see Service::Start)
  std::string pg_conninfo;                         // libpq connection string or URI
  std::string lock_url;                            // redis://host:port (Redis or latchd)
  std::chrono::milliseconds hold{15 * 60 * 1000};  // how long a reservation holds its seats
  std::chrono::milliseconds lock_ttl{5000};        // seat lock lease
  std::chrono::milliseconds lock_wait{0};          // 0: a held seat lock answers 409 at once
  std::chrono::milliseconds sweep_interval{1000};  // 0: no sweeper (holds expire on read)
  std::chrono::milliseconds lock_call_timeout{1000};
  std::size_t workers = 16;  // threads that run requests (they block on libpq and locks)
  std::size_t pg_pool = 10;  // PostgreSQL connections
  std::size_t body_limit = 64 * 1024;
  bool lock_seats = true;  // false: defence 1 off (for demonstrations and tests)
  // Open PostgreSQL and lock server connections at start (false: on first use, to measure
  // what that costs a fresh instance's first burst of requests).
  bool warm_connections = true;
  // One line per request (method, path, status, duration, round trips); nullptr: none.
  std::FILE* access_log = stderr;
};

class Service {
 public:
  explicit Service(ServiceOptions options);
  ~Service();  // Stop()
  Service(const Service&) = delete;
  Service& operator=(const Service&) = delete;

  // Applies the schema, starts the sweeper and the HTTP server; returns the HTTP port.
  // Throws std::runtime_error (with the reason) when PostgreSQL cannot be reached, the lock
  // URL is invalid or the address cannot be bound.
  int Start();
  void Stop();  // idempotent
  int port() const;

  struct Parts;

 private:
  ServiceOptions options_;
  std::unique_ptr<Parts> parts_;
};

}  // namespace latch::demo
