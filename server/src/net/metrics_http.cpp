#include "net/metrics_http.h"

#include <spdlog/spdlog.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <list>
#include <optional>
#include <stdexcept>
#include <thread>

#include "report/metrics_text.h"
#include "net/listener.h"
#include "server_state.h"

namespace latch {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::ip::tcp;

namespace {
constexpr auto kIdleTimeout = std::chrono::seconds(10);
constexpr std::size_t kMaxSessions = 64;  // scrapers are few; more are closed at once
constexpr std::uint32_t kMetricsHeaderLimit = 8 * 1024;
constexpr std::uint64_t kBodyLimit = 4 * 1024;
constexpr char kContentType[] = "text/plain; version=0.0.4; charset=utf-8";
}  // namespace

class MetricsSession : public std::enable_shared_from_this<MetricsSession> {
 public:
  MetricsSession(tcp::socket socket, ServerState& state)
      : stream_(std::move(socket)), state_(state) {}

  void Start() { Read(); }
  void Close() {
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream_.close();
  }
  bool done() const { return done_; }

 private:
  void Read() {
    parser_.emplace();
    parser_->header_limit(kMetricsHeaderLimit);
    parser_->body_limit(kBodyLimit);
    stream_.expires_after(kIdleTimeout);
    http::async_read(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](beast::error_code ec, std::size_t) { self->OnRead(ec); });
  }

  void OnRead(beast::error_code ec) {
    if (ec == http::error::end_of_stream || ec == beast::error::timeout ||
        ec == asio::error::operation_aborted || ec == asio::error::connection_reset ||
        ec == asio::error::eof) {
      return Finish();
    }
    if (ec) {  // malformed request or a limit exceeded: answer and close
      return Reply(
          Respond(http::status::bad_request, "bad request: " + ec.message() + "\n", 11, false));
    }
    const auto& req = parser_->get();
    std::string_view target(req.target().data(), req.target().size());
    target = target.substr(0, target.find('?'));
    if (target != "/metrics") {
      return Reply(Respond(http::status::not_found, "not found: try /metrics\n", req.version(),
                           req.keep_alive()));
    }
    if (req.method() != http::verb::get && req.method() != http::verb::head) {
      auto res = Respond(http::status::method_not_allowed, "only GET and HEAD\n", req.version(),
                         req.keep_alive());
      res.set(http::field::allow, "GET, HEAD");
      return Reply(std::move(res));
    }
    auto res = Respond(http::status::ok, MetricsText(state_), req.version(), req.keep_alive());
    res.set(http::field::content_type, kContentType);
    if (req.method() == http::verb::head) {  // the GET's headers, Content-Length included
      const std::size_t length = res.body().size();
      res.body().clear();
      res.content_length(length);
    }
    Reply(std::move(res));
  }

  http::response<http::string_body> Respond(http::status status, std::string body, unsigned version,
                                            bool keep_alive) {
    http::response<http::string_body> res{status, version};
    res.set(http::field::server, "latchd");
    res.set(http::field::content_type, "text/plain; charset=utf-8");
    res.body() = std::move(body);
    res.keep_alive(keep_alive);
    res.prepare_payload();
    return res;
  }

  void Reply(http::response<http::string_body> res) {
    response_ = std::move(res);
    Write();
  }

  void Write() {
    stream_.expires_after(kIdleTimeout);
    http::async_write(stream_, response_,
                      [self = shared_from_this()](beast::error_code ec, std::size_t) {
                        if (ec || !self->response_.keep_alive()) return self->Finish();
                        self->Read();
                      });
  }

  void Finish() {
    done_ = true;
    Close();
  }

  beast::tcp_stream stream_;
  ServerState& state_;
  beast::flat_buffer buffer_{kMetricsHeaderLimit};
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> response_;
  bool done_ = false;
};

class MetricsHttp::Impl {
 public:
  explicit Impl(ServerState& state) : state_(state), acceptor_(ctx_) {}

  int Start(const std::string& bind, int port) {
    const int bound = OpenListener(acceptor_, bind, port, 64, "the metrics");
    Accept();
    thread_ = std::thread([this] { ctx_.run(); });
    return bound;
  }

  void Stop() {
    if (!thread_.joinable()) return;
    asio::post(ctx_, [this] {
      beast::error_code ec;
      acceptor_.close(ec);
      for (auto& weak : sessions_) {
        if (auto s = weak.lock()) s->Close();
      }
    });
    thread_.join();  // run() ends when the aborted accept and the closed sessions finish
  }

 private:
  void Accept() {
    acceptor_.async_accept([this](beast::error_code ec, tcp::socket socket) {
      if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;
      if (!ec) {
        sessions_.remove_if([](const std::weak_ptr<MetricsSession>& w) {
          auto s = w.lock();
          return !s || s->done();
        });
        if (sessions_.size() >= kMaxSessions) {
          beast::error_code ignored;
          socket.close(ignored);
        } else {
          auto session = std::make_shared<MetricsSession>(std::move(socket), state_);
          sessions_.push_back(session);
          session->Start();
        }
      }
      Accept();
    });
  }

  ServerState& state_;
  asio::io_context ctx_{1};
  tcp::acceptor acceptor_;
  std::thread thread_;
  std::list<std::weak_ptr<MetricsSession>> sessions_;
};

MetricsHttp::MetricsHttp(ServerState& state) : impl_(std::make_unique<Impl>(state)) {}
MetricsHttp::~MetricsHttp() { Stop(); }
int MetricsHttp::Start(const std::string& bind, int port) { return impl_->Start(bind, port); }
void MetricsHttp::Stop() { impl_->Stop(); }

}  // namespace latch
