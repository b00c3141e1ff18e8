#pragma once
// A small HTTP/1.1 server on Boost.Beast. The header stays free of Asio and Beast (they are
// slow to compile); everything network-related lives in http_server.cpp.
//
// Threads: one I/O thread reads requests and writes responses for every connection (one
// coroutine per connection, keep-alive, a timeout on every read and write). The handler is
// synchronous and may block (libpq, lock calls): it runs on a pool of `workers` threads,
// and the connection's coroutine resumes on the I/O thread when it is done. So a slow
// PostgreSQL never stalls the reading and writing of other connections.
#include <chrono>
#include <cstdio>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace latch::demo {

struct HttpRequest {
  std::string method;                                        // "GET", "POST", ...
  std::string target;                                        // path and query, as sent
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
  std::string body;

  // The first header of that (lower-case) name, or nullptr.
  const std::string* header(std::string_view name) const;
};

struct HttpResponse {
  int status = 200;
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // besides Content-Type/Length
  std::string content_type = "application/json";
  std::string log_note;  // appended to the request's access log line (e.g. round trips)
};

using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

struct HttpServerOptions {
  std::string bind = "127.0.0.1";
  int port = 0;  // 0: a free port, see HttpServer::port()
  std::size_t workers = 16;
  std::size_t body_limit = 64 * 1024;           // larger bodies get 413
  std::chrono::milliseconds io_timeout{30000};  // per read and per write
  // One line per request (see LogRequest in http_server.cpp); nullptr: none. Not owned.
  std::FILE* access_log = stderr;
};

class HttpServer {
 public:
  HttpServer(HttpServerOptions options, HttpHandler handler);
  ~HttpServer();  // Stop()
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and starts serving; returns the bound port. Throws std::runtime_error when the
  // address cannot be bound.
  int Start();
  // Stops accepting, closes connections, waits for running handlers. Idempotent.
  void Stop();
  int port() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace latch::demo
