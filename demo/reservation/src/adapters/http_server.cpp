#include "adapters/http_server.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <future>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

namespace latch::demo {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

const std::string* HttpRequest::header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (key == name) return &value;
  }
  return nullptr;
}

namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// Errors found before a handler runs: the request could not be read as HTTP.
HttpResponse ProtocolError(const beast::error_code& ec) {
  if (ec == http::error::body_limit) {
    return {413, R"({"error":"payload_too_large","message":"request body is too large"})", {}};
  }
  if (ec == http::error::header_limit) {
    return {431, R"({"error":"headers_too_large","message":"request headers are too large"})", {}};
  }
  return {400, R"({"error":"bad_request","message":"malformed HTTP request"})", {}};
}

// "2026-12-01T15:40:00.123Z": the time a request was answered, in the access log.
std::string UtcNow() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[80];  // room for any int the compiler can imagine in each field
  std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(ms.count() % 1000));
  return buf;
}

// One line per answered request (stderr by default):
//   2026-12-01T15:40:00.123Z GET /events/1 200 0.84ms pg=1 lock=0
// time, method, target (as sent, control characters replaced), status, the time from the
// request read to the response written, then the handler's note (round trips to PostgreSQL
// and the lock server, see HttpApi). One fprintf per line: stdio locks the stream, so lines
// of concurrent requests never interleave.
void LogRequest(std::FILE* out, std::string_view method, std::string_view target, int status,
                std::chrono::steady_clock::duration took, const std::string& note) {
  std::string safe_target(target.substr(0, 2048));
  for (char& c : safe_target) {
    if (static_cast<unsigned char>(c) < 0x21 || c == 0x7f) c = '?';
  }
  const double ms = std::chrono::duration<double, std::milli>(took).count();
  std::fprintf(out, "%s %.*s %s %d %.2fms%s%s\n", UtcNow().c_str(),
               static_cast<int>(method.size()), method.data(), safe_target.c_str(), status, ms,
               note.empty() ? "" : " ", note.c_str());
}

}  // namespace

struct HttpServer::Impl {
  HttpServerOptions options;
  HttpHandler handler;
  asio::io_context io{1};
  asio::thread_pool workers;
  tcp::acceptor acceptor{io};
  std::thread io_thread;
  int port = 0;
  std::mutex mu;
  bool stopped = false;
  std::set<std::shared_ptr<beast::tcp_stream>> streams;  // I/O thread only

  Impl(HttpServerOptions o, HttpHandler h)
      : options(std::move(o)), handler(std::move(h)), workers(options.workers) {}

  asio::awaitable<void> Accept() {
    for (;;) {
      auto [ec, socket] = co_await acceptor.async_accept(asio::as_tuple(asio::use_awaitable));
      if (ec) {
        if (ec == asio::error::operation_aborted || !acceptor.is_open()) co_return;
        continue;  // e.g. EMFILE: keep serving the connections we have
      }
      auto stream = std::make_shared<beast::tcp_stream>(std::move(socket));
      streams.insert(stream);
      asio::co_spawn(io, Serve(stream), asio::detached);
    }
  }

  asio::awaitable<HttpResponse> RunHandler(HttpRequest request) {
    try {
      co_return handler(request);
    } catch (...) {
      // Handlers report errors as values; this is the net under a bug, not a path.
      co_return HttpResponse{500, R"({"error":"internal","message":"internal error"})", {}};
    }
  }

  asio::awaitable<void> Serve(std::shared_ptr<beast::tcp_stream> stream) {
    beast::flat_buffer buffer;
    for (;;) {
      http::request_parser<http::string_body> parser;
      parser.body_limit(options.body_limit);
      parser.header_limit(16 * 1024);
      stream->expires_after(options.io_timeout);
      auto [header_ec, header_bytes] = co_await http::async_read_header(
          *stream, buffer, parser, asio::as_tuple(asio::use_awaitable));
      (void)header_bytes;
      beast::error_code read_ec = header_ec;
      if (!read_ec && !parser.is_done()) {
        // A client that sent "Expect: 100-continue" (curl does for bodies over 1 KiB) waits
        // for this before sending the body (RFC 9110, 10.1.1); without it, curl stalls a
        // second per request. A declared body over the limit was already refused above.
        if (parser.get().version() >= 11 &&
            beast::iequals(parser.get()[http::field::expect], "100-continue")) {
          http::response<http::empty_body> proceed{http::status::continue_,
                                                   parser.get().version()};
          auto [continue_ec, continue_bytes] = co_await http::async_write(
              *stream, proceed, asio::as_tuple(asio::use_awaitable));
          (void)continue_bytes;
          if (continue_ec) break;
        }
        auto [body_ec, body_bytes] = co_await http::async_read(
            *stream, buffer, parser, asio::as_tuple(asio::use_awaitable));
        (void)body_bytes;
        read_ec = body_ec;
      }
      const auto read_at = std::chrono::steady_clock::now();
      HttpResponse response;
      bool keep_alive = false;
      unsigned version = 11;
      std::string method = "-";
      std::string target = "-";
      if (parser.is_header_done()) {
        method = std::string(parser.get().method_string());
        target = std::string(parser.get().target());
      }
      if (read_ec) {
        if (read_ec == http::error::end_of_stream || read_ec == beast::error::timeout ||
            read_ec == asio::error::operation_aborted || read_ec == asio::error::eof ||
            read_ec == asio::error::connection_reset || !parser.got_some()) {
          break;  // the peer left, or the server is stopping
        }
        response = ProtocolError(read_ec);  // answered, then the connection is closed
      } else {
        auto& req = parser.get();
        keep_alive = req.keep_alive();
        version = req.version();
        HttpRequest request;
        request.method = std::string(req.method_string());
        request.target = std::string(req.target());
        for (const auto& field : req) {
          request.headers.emplace_back(Lower(field.name_string()), std::string(field.value()));
        }
        request.body = std::move(req.body());
        // The handler blocks: run it on the worker pool; we resume here on the I/O thread.
        response =
            co_await asio::co_spawn(workers, RunHandler(std::move(request)), asio::use_awaitable);
      }
      http::response<http::string_body> res{static_cast<http::status>(response.status), version};
      res.set(http::field::content_type, response.content_type);
      for (const auto& [name, value] : response.headers) res.set(name, value);
      res.keep_alive(keep_alive);
      res.body() = std::move(response.body);
      res.prepare_payload();
      stream->expires_after(options.io_timeout);
      auto [write_ec, written] =
          co_await http::async_write(*stream, res, asio::as_tuple(asio::use_awaitable));
      (void)written;
      if (options.access_log) {
        LogRequest(options.access_log, method, target, response.status, std::chrono::steady_clock::now() - read_at,
                   response.log_note);
      }
      if (write_ec || !keep_alive) break;
    }
    // Lingering close: a client still sending (e.g. the body we refused with 413) would get
    // a reset, and may lose our response with it, if we closed with its bytes unread. Read
    // and drop what is in flight, bounded in bytes and time.
    {
      beast::error_code ignored;
      stream->socket().shutdown(tcp::socket::shutdown_send, ignored);
      stream->expires_after(std::chrono::seconds(2));
      std::size_t drained = 0;
      char scratch[8192];
      while (drained < 4 * 1024 * 1024) {
        auto [ec, got] = co_await stream->async_read_some(asio::buffer(scratch),
                                                          asio::as_tuple(asio::use_awaitable));
        if (ec) break;
        drained += got;
      }
    }
    stream->close();
    streams.erase(stream);
  }
};

HttpServer::HttpServer(HttpServerOptions options, HttpHandler handler)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(handler))) {}

HttpServer::~HttpServer() { Stop(); }

int HttpServer::Start() {
  Impl& s = *impl_;
  beast::error_code ec;
  tcp::endpoint endpoint(asio::ip::make_address(s.options.bind, ec),
                         static_cast<unsigned short>(s.options.port));
  if (ec) throw std::runtime_error("bad bind address " + s.options.bind + ": " + ec.message());
  s.acceptor.open(endpoint.protocol(), ec);
  if (!ec) s.acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) s.acceptor.bind(endpoint, ec);
  if (!ec) s.acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    throw std::runtime_error("cannot listen on " + s.options.bind + ":" +
                             std::to_string(s.options.port) + ": " + ec.message());
  }
  s.port = s.acceptor.local_endpoint().port();
  asio::co_spawn(s.io, s.Accept(), asio::detached);
  s.io_thread = std::thread([&s] { s.io.run(); });
  return s.port;
}

void HttpServer::Stop() {
  Impl& s = *impl_;
  {
    std::lock_guard lock(s.mu);
    if (s.stopped) return;
    s.stopped = true;
  }
  if (s.io_thread.joinable()) {
    // On the I/O thread (which owns the acceptor and the streams), and waited for, so that
    // no request is read after this point.
    std::promise<void> closed;
    asio::post(s.io, [&s, &closed] {
      beast::error_code ignored;
      s.acceptor.close(ignored);
      for (const auto& stream : s.streams) stream->socket().close(ignored);
      closed.set_value();
    });
    closed.get_future().wait();
  }
  // Handlers still running finish; the coroutines waiting for them then see closed sockets.
  s.workers.join();
  s.io.stop();
  if (s.io_thread.joinable()) s.io_thread.join();
}

int HttpServer::port() const { return impl_->port; }

}  // namespace latch::demo
