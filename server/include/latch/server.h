#pragma once
// The embeddable server. latchd's main() is a thin wrapper around this class; a test suite
// starts it in-process on port 0:
//
//   auto clock = std::make_shared<latch::ManualClock>();
//   latch::Options o; o.port = 0; o.clock = clock;
//   latch::Server server(o);
//   int port = server.start();
//   ... connect to 127.0.0.1:port, clock->advance(1000) ...
//   server.stop();
//
// The header stays free of Asio: everything network-related lives in the implementation.
#include <cstdint>
#include <memory>

#include "latch/clock.h"
#include "latch/options.h"

namespace latch {

class ServerImpl;
struct ServerState;

class Server {
 public:
  explicit Server(Options options);
  ~Server();  // stops the server if running
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds, starts the worker threads and returns the bound port. Throws std::runtime_error
  // when the address cannot be bound.
  int start();
  // Stops accepting, closes every client and joins the threads. Idempotent.
  void stop();
  // Blocks until stop() is called (from another thread or a signal handler path) or a
  // client sent SHUTDOWN; after SHUTDOWN the caller still calls stop() (or destroys the
  // Server) to join the threads.
  void wait();

  int port() const;
  // The bound port of GET /metrics (Options::metrics_port), 0 when it is off.
  int metrics_port() const;
  // The bound port of the REST endpoint (Options::rest_port), 0 when it is off.
  int rest_port() const;
  // The bound TLS port (Options::tls_port; -1 picks a free one), 0 when TLS is off.
  int tls_port() const;
  // The io threads and shards it runs: Options::io_threads and Options::shards, or their
  // defaults (latch/options.h) when those are 0.
  int io_threads() const;
  int shards() const;
  const Clock& clock() const;

 private:
  // The test kit (latch/testing/) inspects and seeds the state without the network.
  friend ServerState& InternalState(Server& server);
  std::unique_ptr<ServerImpl> impl_;
};

}  // namespace latch
