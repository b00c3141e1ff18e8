#include "client_runner.h"

#include <memory>
#include <vector>

namespace latch::bench {

RunOutcome RunClients(const std::string& host, int port, int clients, Clock::time_point hard_stop,
                      const ClientBody& body) {
  asio::io_context io(1);
  std::vector<std::unique_ptr<Connection>> conns;
  conns.reserve(static_cast<std::size_t>(clients));
  for (int i = 0; i < clients; ++i) conns.push_back(std::make_unique<Connection>(io));
  RunOutcome outcome;
  int running = clients;
  asio::steady_timer watchdog(io, hard_stop);
  watchdog.async_wait([&](const boost::system::error_code& ec) {
    if (ec) return;  // cancelled: every client ended in time
    for (auto& c : conns) c->Close();
  });
  for (int i = 0; i < clients; ++i) {
    asio::co_spawn(
        io,
        [&, i]() -> asio::awaitable<void> {
          Connection& c = *conns[static_cast<std::size_t>(i)];
          std::error_code ec = co_await c.Connect(host, port);
          if (!ec) ec = co_await body(c, i);
          if (ec && Clock::now() < hard_stop) {
            if (outcome.failed_clients++ == 0) outcome.first_failure = ec.message();
          }
          c.Close();
          if (--running == 0) watchdog.cancel();
        },
        asio::detached);
  }
  io.run();
  return outcome;
}

}  // namespace latch::bench
