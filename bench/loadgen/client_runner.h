#pragma once
// Runs one coroutine per client connection on a single-threaded io_context until all end.
// A watchdog closes every connection at `hard_stop`, so a silent server (or a client parked
// in a blocking acquire) cannot keep the run alive past its time limit.
#include <functional>
#include <string>

#include "connection.h"

namespace latch::bench {

struct RunOutcome {
  int failed_clients = 0;  // clients that could not connect or lost their connection early
  std::string first_failure;
};

using ClientBody = std::function<asio::awaitable<std::error_code>(Connection&, int client)>;

// Connects `clients` connections to host:port, then runs body(conn, index) on each.
RunOutcome RunClients(const std::string& host, int port, int clients, Clock::time_point hard_stop,
                      const ClientBody& body);

}  // namespace latch::bench
