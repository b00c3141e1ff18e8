#include "rest/leader_proxy.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <memory>
#include <optional>
#include <utility>

namespace latch::rest {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::ip::tcp;

// One exchange; it owns itself through the handlers it has pending.
class LeaderExchange : public std::enable_shared_from_this<LeaderExchange> {
 public:
  LeaderExchange(asio::io_context& io, RelayedRequest request, const RelayLimits& limits,
                 std::function<void(RelayedAnswer)> done)
      : stream_(io),
        resolver_(io),
        resolve_deadline_(io),
        limits_(limits),
        request_(std::move(request)),
        done_(std::move(done)) {}

  void Start(const std::string& host, int port) {
    Build(host, port);
    stream_.expires_after(limits_.connect);
    boost::system::error_code ec;
    const auto address = asio::ip::make_address(host, ec);
    auto self = shared_from_this();
    if (!ec) {
      return stream_.async_connect(tcp::endpoint(address, static_cast<unsigned short>(port)),
                                   [self](beast::error_code e) { self->OnConnected(e); });
    }
    // A host name (raft-peers as written): the stream's deadline does not cover the lookup.
    resolve_deadline_.expires_after(limits_.connect);
    resolve_deadline_.async_wait([self](beast::error_code e) {
      if (!e) self->resolver_.cancel();
    });
    resolver_.async_resolve(
        host, std::to_string(port),
        [self](beast::error_code e, const tcp::resolver::results_type& r) {
          self->resolve_deadline_.cancel();
          if (e) return self->Fail(RelayedAnswer::Outcome::kNotSent, e);
          self->stream_.async_connect(
              r, [self](beast::error_code e2, const tcp::endpoint&) { self->OnConnected(e2); });
        });
  }

 private:
  void Build(const std::string& host, int port) {
    const bool head = request_.method == "HEAD";
    out_.method_string(head ? "GET" : request_.method);
    out_.target(request_.target);
    out_.version(11);
    out_.set(http::field::host, host + ":" + std::to_string(port));
    if (!request_.authorization.empty())
      out_.set(http::field::authorization, request_.authorization);
    if (!request_.encoding.empty()) out_.set("Upstash-Encoding", request_.encoding);
    if (!request_.telemetry_sdk.empty()) out_.set("Upstash-Telemetry-Sdk", request_.telemetry_sdk);
    out_.set(kRelayedHeader, "1");
    out_.set(http::field::connection, "close");
    out_.body() = std::move(request_.body);
    out_.prepare_payload();
  }

  void OnConnected(beast::error_code ec) {
    if (ec) return Fail(RelayedAnswer::Outcome::kNotSent, ec);
    boost::system::error_code ignored;
    stream_.socket().set_option(tcp::no_delay(true), ignored);
    stream_.expires_after(limits_.exchange);
    http::async_write(stream_, out_, [self = shared_from_this()](beast::error_code e, std::size_t) {
      if (e) return self->Fail(RelayedAnswer::Outcome::kLost, e);
      self->Read();
    });
  }

  void Read() {
    parser_.emplace();
    parser_->body_limit(limits_.answer_bytes);
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code e, std::size_t) {
                       if (e) return self->Fail(RelayedAnswer::Outcome::kLost, e);
                       RelayedAnswer a;
                       a.outcome = RelayedAnswer::Outcome::kAnswered;
                       a.status = static_cast<int>(self->parser_->get().result_int());
                       a.body = std::move(self->parser_->get().body());
                       self->Finish(std::move(a));
                     });
  }

  void Fail(RelayedAnswer::Outcome outcome, beast::error_code ec) {
    RelayedAnswer a;
    a.outcome = outcome;
    a.error = ec == http::error::body_limit
                  ? "its answer is larger than " + std::to_string(limits_.answer_bytes) + " bytes"
                  : ec.message();
    Finish(std::move(a));
  }

  void Finish(RelayedAnswer a) {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.close();
    if (auto done = std::exchange(done_, nullptr)) done(std::move(a));
  }

  beast::tcp_stream stream_;
  tcp::resolver resolver_;
  asio::steady_timer resolve_deadline_;
  RelayLimits limits_;
  RelayedRequest request_;
  std::function<void(RelayedAnswer)> done_;
  http::request<http::string_body> out_;
  beast::flat_buffer buffer_;
  std::optional<http::response_parser<http::string_body>> parser_;
};

}  // namespace

void RelayToLeader(asio::io_context& io, const std::string& host, int port, RelayedRequest request,
                   const RelayLimits& limits, std::function<void(RelayedAnswer)> done) {
  std::make_shared<LeaderExchange>(io, std::move(request), limits, std::move(done))
      ->Start(host, port);
}

}  // namespace latch::rest
