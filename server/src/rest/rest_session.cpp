// One HTTP/1.1 connection of the REST endpoint, on its worker's io_context (Boost.Beast):
// read a header, check the token, read the body within the limits, run the request through
// command_runner.h, write the JSON answer, and read the next request on the same connection
// (keep-alive) until the client closes it or it stays idle too long.
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <optional>
#include <unordered_set>

#include "journal/journal.h"
#include "journal/server_hooks.h"
#include "net/worker.h"
#include "rest/command_runner.h"
#include "rest/rest_endpoint.h"
#include "rest/rest_routes.h"
#include "server_state.h"

namespace latch::rest {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::ip::tcp;

namespace {
// The path form is an inline command: Redis's inline-request limit bounds the header.
constexpr std::uint32_t kHeaderLimit = 64 * 1024;
// Before the token is checked, a body is bounded as a RESP argument before AUTH.
constexpr std::uint64_t kUnauthBodyLimit = 16 * 1024;
// Keep-alive idle limit when `timeout` is 0 (an HTTP connection is never kept forever).
constexpr auto kDefaultIdle = std::chrono::seconds(60);

std::string_view Sv(beast::string_view s) { return {s.data(), s.size()}; }
}  // namespace

class RestSession;
struct SessionSet::Registry {
  std::unordered_set<RestSession*> sessions;
};

class RestSession : public std::enable_shared_from_this<RestSession> {
 public:
  RestSession(tcp::socket socket, ServerState& state, asio::io_context& context,
              SessionSet::Registry& registry, std::shared_ptr<ClientInfo> info)
      : stream_(std::move(socket)),
        state_(state),
        context_(context),
        registry_(registry),
        info_(std::move(info)) {}

  ~RestSession() {
    registry_.sessions.erase(this);
    state_.clients.Remove(info_->id);
  }

  void Start() {
    registry_.sessions.insert(this);
    beast::error_code ec;
    tcp::socket& s = stream_.socket();
    s.set_option(tcp::no_delay(true), ec);
    const auto remote = s.remote_endpoint(ec);
    const auto local = s.local_endpoint(ec);
    const std::int64_t now = state_.clock->MonoMs();
    {
      std::lock_guard lock(state_.clients.mu);  // CLIENT LIST reads these under it
      info_->addr = remote.address().to_string() + ":" + std::to_string(remote.port());
      info_->laddr = local.address().to_string() + ":" + std::to_string(local.port());
      info_->fd = s.native_handle();
      info_->created_ms = now;
    }
    info_->last_interaction_ms = now;
    ReadHeader();
  }

  void Close() {
    if (closed_) return;
    closed_ = true;
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream_.close();
  }

 private:
  std::chrono::seconds IdleTimeout() const {
    const int t = state_.timeout.load(std::memory_order_relaxed);
    return t > 0 ? std::chrono::seconds(t) : kDefaultIdle;
  }

  void ReadHeader() {
    if (closed_) return;
    parser_.emplace();
    parser_->header_limit(kHeaderLimit);
    // The same bound as a RESP client's pending request; lowered below before the token.
    parser_->body_limit(static_cast<std::uint64_t>(
        state_.client_query_buffer_limit.load(std::memory_order_relaxed)));
    stream_.expires_after(IdleTimeout());
    http::async_read_header(stream_, buffer_, *parser_,
                            [self = shared_from_this()](beast::error_code ec, std::size_t n) {
                              self->OnHeader(ec, n);
                            });
  }

  void OnHeader(beast::error_code ec, std::size_t n) {
    state_.stats.net_input_bytes.fetch_add(n, std::memory_order_relaxed);
    if (ec) return OnReadError(ec);
    info_->last_interaction_ms.store(state_.clock->MonoMs(), std::memory_order_relaxed);
    const auto& req = parser_->get();
    authorized_ = Authorized(state_, Sv(req[http::field::authorization]), Sv(req.target()));
    if (!authorized_) {
      const auto length = parser_->content_length();
      if (parser_->chunked() || (length && *length > kUnauthBodyLimit)) {
        return Respond(UnauthorizedResult(), true);
      }
      parser_->body_limit(kUnauthBodyLimit);
    }
    if (parser_->is_done()) return Handle();
    if (authorized_ && req.version() >= 11 &&
        beast::iequals(req[http::field::expect], "100-continue")) {
      return WriteContinue();
    }
    ReadBody();
  }

  // curl and others wait for this before sending a large body.
  void WriteContinue() {
    continue_.emplace(http::status::continue_, 11);
    http::async_write(stream_, *continue_,
                      [self = shared_from_this()](beast::error_code ec, std::size_t) {
                        if (ec) return self->Close();
                        self->ReadBody();
                      });
  }

  void ReadBody() {
    http::async_read(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](beast::error_code ec, std::size_t n) {
          self->state_.stats.net_input_bytes.fetch_add(n, std::memory_order_relaxed);
          if (ec == http::error::body_limit) {
            return self->Respond(
                self->authorized_ ? BodyTooLargeResult(self->state_) : UnauthorizedResult(), true);
          }
          if (ec) return self->OnReadError(ec);
          self->Handle();
        });
  }

  void OnReadError(beast::error_code ec) {
    if (closed_ || ec == http::error::end_of_stream || ec == http::error::partial_message ||
        ec == beast::error::timeout || ec == asio::error::operation_aborted ||
        ec == asio::error::connection_reset || ec == asio::error::eof) {
      return Close();
    }
    if (ec == http::error::header_limit) return Respond(HeaderTooLargeResult(), true);
    if (ec == http::error::body_limit) return Respond(BodyTooLargeResult(state_), true);
    Respond({400, JsonError("ERR malformed HTTP request: " + ec.message())}, true);
  }

  void Handle() {
    const auto& req = parser_->get();
    RequestView view;
    view.method = Sv(req.method_string());
    view.target = Sv(req.target());
    view.body = req.body();
    view.encoding = Sv(req["Upstash-Encoding"]);
    view.telemetry_sdk = Sv(req["Upstash-Telemetry-Sdk"]);
    view.authorized = authorized_;
    const bool close = !req.keep_alive();
    const std::uint64_t journaled_before = journal::ThisThreadLastSeq();
    std::optional<RouteResult> result = Route(state_, info_, view, AnswerLater(close));
    if (!result) return;  // the request runs on the script thread
    const std::uint64_t journaled = journal::ThisThreadLastSeq();
    Answer(std::move(*result), journaled != journaled_before ? journaled : 0, close);
  }

  // Where the answer of a request run on the script thread comes back: this worker, which
  // runs `finish` for it. The session is kept alive until then by one reference, moved along
  // (so that the last reference is always let go on this worker, never on the script thread).
  RouteLater AnswerLater(bool close) {
    auto keep = std::make_shared<std::shared_ptr<RestSession>>(shared_from_this());
    return [keep, close](RouteFinish finish) {
      std::shared_ptr<RestSession> self = std::move(*keep);
      asio::io_context& context = self->context_;
      asio::post(context, [self = std::move(self), close, finish = std::move(finish)] {
        if (self->closed_) return;
        RouteResult result = finish();
        // Records appended by the script thread for this request are all in by now.
        self->Answer(std::move(result), journal::AppendedSeq(self->state_), close);
      });
    };
  }

  // As a RESP reply: under appendfsync always the answer waits for its records' fdatasync
  // (everysec and no: for their write(), done inside HoldUntilDurable). `journaled`: the last
  // record the answer depends on, 0 for none.
  void Answer(RouteResult result, std::uint64_t journaled, bool close) {
    if (journaled != 0) {
      auto pending = std::make_shared<RouteResult>(std::move(result));
      if (journal::HoldUntilDurable(state_, journaled, context_,
                                    [self = shared_from_this(), pending, close] {
                                      if (!self->closed_) self->Respond(std::move(*pending), close);
                                    })) {
        return;
      }
      result = std::move(*pending);
    }
    Respond(std::move(result), close);
  }

  void Respond(RouteResult result, bool close) {
    const bool head =
        parser_ && parser_->is_header_done() && parser_->get().method() == http::verb::head;
    const unsigned version = parser_ && parser_->is_header_done() ? parser_->get().version() : 11;
    response_ = {};
    response_.result(static_cast<unsigned>(result.status));
    response_.version(version);
    response_.set(http::field::server, "latchd");
    response_.set(http::field::content_type, "application/json");
    if (!result.allow.empty()) response_.set(http::field::allow, result.allow);
    response_.set("upstash-sync-token", SyncToken(state_));
    response_.keep_alive(!close);
    const std::size_t length = result.body.size();
    response_.body() = std::move(result.body);
    response_.prepare_payload();
    if (head) {  // the GET's headers, Content-Length included
      response_.body().clear();
      response_.content_length(length);
    }
    stream_.expires_after(IdleTimeout());
    http::async_write(stream_, response_,
                      [self = shared_from_this()](beast::error_code ec, std::size_t n) {
                        self->state_.stats.net_output_bytes.fetch_add(n, std::memory_order_relaxed);
                        if (ec || !self->response_.keep_alive()) return self->Close();
                        self->ReadHeader();
                      });
  }

  beast::tcp_stream stream_;
  ServerState& state_;
  asio::io_context& context_;
  SessionSet::Registry& registry_;
  std::shared_ptr<ClientInfo> info_;
  beast::flat_buffer buffer_{kHeaderLimit};
  std::optional<http::request_parser<http::string_body>> parser_;
  std::optional<http::response<http::empty_body>> continue_;
  http::response<http::string_body> response_;
  bool authorized_ = false;
  bool closed_ = false;
};

SessionSet::SessionSet() : registry_(std::make_unique<Registry>()) {}
SessionSet::~SessionSet() = default;

void SessionSet::Start(int fd, ServerState& state, Worker& worker,
                       std::shared_ptr<ClientInfo> info) {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  tcp::socket socket(worker.context());
  beast::error_code ec;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    socket.assign(address.ss_family == AF_INET6 ? tcp::v6() : tcp::v4(), fd, ec);
  } else {
    ec = asio::error::bad_descriptor;
  }
  if (ec) {
    ::close(fd);
    state.clients.Remove(info->id);
    return;
  }
  std::make_shared<RestSession>(std::move(socket), state, worker.context(), *registry_,
                                std::move(info))
      ->Start();
}

void SessionSet::CloseAll() {
  std::vector<RestSession*> sessions(registry_->sessions.begin(), registry_->sessions.end());
  for (RestSession* s : sessions) s->Close();
}

}  // namespace latch::rest
