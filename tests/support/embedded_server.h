#pragma once
// latch::Server started in-process on 127.0.0.1, port 0, with a ManualClock: wire tests
// talk to it over real sockets and move time with clock().advance(ms) instead of sleeping.
//
//   latch::test::EmbeddedServer server;
//   latch::test::RawConnection conn(server.port());
//   conn.Command("SET", "k", "v", "PX", "100");
//   server.clock().advance(101);
#include <chrono>
#include <cstdint>
#include <memory>

#include "latch/clock.h"
#include "latch/options.h"
#include "latch/server.h"

namespace latch::test {

class EmbeddedServer {
 public:
  // Starts the server; `options.port`, `options.bind` and `options.clock` are overridden.
  // The manual clock starts at `wall_ms` (Unix ms): the default is a fixed instant so that
  // tests are reproducible; pass NowWallMs() when comparing with a real-time server.
  // Throws (failing the test) when the server cannot start.
  explicit EmbeddedServer(Options options = DefaultOptions(),
                          std::int64_t wall_ms = 1'700'000'000'000);
  ~EmbeddedServer();
  EmbeddedServer(const EmbeddedServer&) = delete;
  EmbeddedServer& operator=(const EmbeddedServer&) = delete;

  int port() const { return port_; }
  ManualClock& clock() { return *clock_; }
  Server& server() { return *server_; }

  // Two io threads and a few shards: enough to exercise cross-thread paths while keeping
  // the start-up cheap.
  static Options DefaultOptions();
  // The current Unix time in milliseconds from the system clock.
  static std::int64_t NowWallMs();

 private:
  std::shared_ptr<ManualClock> clock_;
  std::unique_ptr<Server> server_;
  int port_ = 0;
};

}  // namespace latch::test
