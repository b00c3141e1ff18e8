#pragma once
// The Upstash-compatible REST endpoint (rest-port): HTTP/1.1 sessions that live on the worker
// threads, next to the RESP connections, and run commands through the same command table
// (command_runner.h). server.cpp accepts the sockets and hands them over through this
// header; Beast and Asio stay inside rest_session.cpp.
#include <memory>
#include <string_view>

namespace latch {
class Worker;
struct ServerState;
struct ClientInfo;
}  // namespace latch

namespace latch::rest {

// The REST sessions of one worker. Worker-thread only, except that it must outlive the
// worker's io_context (sessions destroyed with that context unregister themselves here).
class SessionSet {
 public:
  SessionSet();
  ~SessionSet();
  SessionSet(const SessionSet&) = delete;
  SessionSet& operator=(const SessionSet&) = delete;

  // Serves the connected TCP socket `fd` (ownership passes here, it is closed on any failure)
  // on `worker`'s thread as the client `info`. Call on that thread.
  void Start(int fd, ServerState& state, Worker& worker, std::shared_ptr<ClientInfo> info);
  // Closes every session (SHUTDOWN, stop()); their pending operations end with an error.
  void CloseAll();

  struct Registry;

 private:
  std::unique_ptr<Registry> registry_;
};

// What a socket accepted over maxclients gets before it is closed: an HTTP 503 with an
// Upstash-style body carrying Redis's error text.
std::string_view MaxClientsResponse();

}  // namespace latch::rest
