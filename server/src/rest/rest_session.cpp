// The read side of a REST session (rest_session.h): a header, its framing and credentials,
// the body within the limits, then the route's answer (rest_answer.cpp).
#include "rest/rest_session.h"

#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <vector>

#include "catalogue/command_catalogue.h"
#include "cluster_node.h"
#include "commands/errors.h"
#include "net/worker.h"
#include "rest/http_framing.h"
#include "rest/leader_proxy.h"
#include "rest/rest_auth.h"
#include "server_state.h"

namespace latch::rest {

namespace {
// The path form is an inline command: Redis's inline-request limit bounds the header.
constexpr std::uint32_t kHeaderLimit = 64 * 1024;
// Before the token is checked, a body is bounded as a RESP argument before AUTH.
constexpr std::uint64_t kUnauthBodyLimit = 16 * 1024;
// Keep-alive idle limit when `timeout` is 0 (an HTTP connection is never kept forever).
constexpr auto kDefaultIdle = std::chrono::seconds(60);

std::string_view Sv(beast::string_view s) { return {s.data(), s.size()}; }

template <class Request>
std::optional<FramingError> CheckRequestFraming(const Request& req) {
  std::vector<std::string_view> codings;
  for (auto [it, end] = req.equal_range(http::field::transfer_encoding); it != end; ++it) {
    codings.push_back(Sv(it->value()));
  }
  return CheckFraming(req.version(), codings, req.count(http::field::content_length) > 0);
}
}  // namespace

RestSession::RestSession(tcp::socket socket, ServerState& state, asio::io_context& context,
                         SessionSet::Registry& registry, std::shared_ptr<ClientInfo> info)
    : stream_(std::move(socket)),
      state_(state),
      context_(context),
      registry_(registry),
      info_(std::move(info)),
      buffer_(kHeaderLimit) {}

RestSession::~RestSession() {
  registry_.sessions.erase(this);
  state_.clients.Remove(info_->id);
}

void RestSession::Start() {
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

void RestSession::Close() {
  if (closed_) return;
  closed_ = true;
  beast::error_code ec;
  stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
  stream_.close();
}

std::chrono::seconds RestSession::IdleTimeout() const {
  const int t = state_.timeout.load(std::memory_order_relaxed);
  return t > 0 ? std::chrono::seconds(t) : kDefaultIdle;
}

void RestSession::ReadHeader() {
  if (closed_) return;
  parser_.emplace();
  parser_->header_limit(kHeaderLimit);
  // The same bound as a RESP client's pending request; lowered below before the token.
  parser_->body_limit(
      static_cast<std::uint64_t>(state_.client_query_buffer_limit.load(std::memory_order_relaxed)));
  stream_.expires_after(IdleTimeout());
  http::async_read_header(
      stream_, buffer_, *parser_,
      [self = shared_from_this()](beast::error_code ec, std::size_t n) { self->OnHeader(ec, n); });
}

void RestSession::OnHeader(beast::error_code ec, std::size_t n) {
  state_.stats.net_input_bytes.fetch_add(n, std::memory_order_relaxed);
  if (ec) return OnReadError(ec);
  info_->last_interaction_ms.store(state_.clock->MonoMs(), std::memory_order_relaxed);
  const auto& req = parser_->get();
  if (std::optional<FramingError> e = CheckRequestFraming(req)) {
    return Respond({e->status, JsonError(e->message)}, true);
  }
  user_ =
      AuthenticateRequest(state_, *info_, Sv(req[http::field::authorization]), Sv(req.target()));
  authorized_ = user_ != nullptr;
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
void RestSession::WriteContinue() {
  continue_.emplace(http::status::continue_, 11);
  http::async_write(stream_, *continue_,
                    [self = shared_from_this()](beast::error_code ec, std::size_t) {
                      if (ec) return self->Close();
                      self->ReadBody();
                    });
}

void RestSession::ReadBody() {
  http::async_read(
      stream_, buffer_, *parser_, [self = shared_from_this()](beast::error_code ec, std::size_t n) {
        self->state_.stats.net_input_bytes.fetch_add(n, std::memory_order_relaxed);
        if (ec == http::error::body_limit) {
          return self->Respond(
              self->authorized_ ? BodyTooLargeResult(self->state_) : UnauthorizedResult(), true);
        }
        if (ec) return self->OnReadError(ec);
        self->Handle();
      });
}

void RestSession::OnReadError(beast::error_code ec) {
  if (closed_ || ec == http::error::end_of_stream || ec == http::error::partial_message ||
      ec == beast::error::timeout || ec == asio::error::operation_aborted ||
      ec == asio::error::connection_reset || ec == asio::error::eof) {
    return Close();
  }
  if (ec == http::error::header_limit) return Respond(HeaderTooLargeResult(), true);
  if (ec == http::error::body_limit) return Respond(BodyTooLargeResult(state_), true);
  Respond({400, JsonError("ERR malformed HTTP request: " + ec.message())}, true);
}

void RestSession::Handle() {
  const auto& req = parser_->get();
  RequestView view;
  view.method = Sv(req.method_string());
  view.target = Sv(req.target());
  view.body = req.body();
  view.encoding = Sv(req["Upstash-Encoding"]);
  view.telemetry_sdk = Sv(req["Upstash-Telemetry-Sdk"]);
  view.user = std::move(user_);
  RouteResult routed = Route(state_, info_, view);
  if (MaybeRelay(routed, !req.keep_alive())) return;
  Respond(std::move(routed), !req.keep_alive());
}

bool RestSession::MaybeRelay(const RouteResult& routed, bool close) {
  // Only on a cluster node that does not serve as the leader (the flag is never set on a
  // single node), for a request that would run a command the leader must run; one already
  // relayed runs here (a node that stopped leading answers as a follower).
  if (routed.job == nullptr || !state_.raft_follower.load(std::memory_order_acquire)) return false;
  const auto& req = parser_->get();
  if (req.count(kRelayedHeader) > 0 || !routed.job->NeedsLeader(*state_.catalogue)) return false;
  cluster::LeaderEndpoint leader;
  // No leader known, or its REST port not known yet: run here, where the dispatcher answers
  // -TRYAGAIN (no leader) or -READONLY, as a RESP client that is not relayed.
  if (!cluster::FollowedLeader(state_, &leader) || leader.rest_port == 0) return false;
  RelayedRequest out{std::string(Sv(req.method_string())),
                     std::string(Sv(req.target())),
                     std::string(Sv(req[http::field::authorization])),
                     std::string(Sv(req["Upstash-Encoding"])),
                     std::string(Sv(req["Upstash-Telemetry-Sdk"])),
                     req.body()};
  RelayLimits limits;
  limits.exchange = IdleTimeout();
  if (const std::uint64_t hard = state_.obuf_hard.load(std::memory_order_relaxed); hard != 0) {
    limits.answer_bytes = std::min<std::uint64_t>(limits.answer_bytes, hard);
  }
  RelayToLeader(context_, leader.host, leader.rest_port, std::move(out), limits,
                [self = shared_from_this(), close, id = leader.id](RelayedAnswer a) {
                  // A leader that cannot be reached is routine in a failover (the client
                  // gets TRYAGAIN); an answer lost after the request went out is not.
                  if (a.outcome == RelayedAnswer::Outcome::kLost) {
                    self->state_.log->warn(
                        "REST client id={}: closed, its request was relayed to the Raft leader "
                        "(node {}) but no answer came: {}",
                        self->info_->id, id, a.error);
                  } else if (a.outcome == RelayedAnswer::Outcome::kNotSent) {
                    self->state_.log->debug(
                        "REST client id={}: cannot reach the Raft leader (node {}): {}",
                        self->info_->id, id, a.error);
                  }
                  self->OnRelayed(std::move(a), close);
                });
  return true;
}

void RestSession::OnRelayed(RelayedAnswer answer, bool close) {
  if (closed_) return;
  switch (answer.outcome) {
    case RelayedAnswer::Outcome::kAnswered:
      return Respond({answer.status, std::move(answer.body)}, close);
    case RelayedAnswer::Outcome::kNotSent:
      // Nothing ran: the error a client retries, as while no leader is known.
      return Respond({400, JsonError(errors::kNoRaftLeader)}, close);
    case RelayedAnswer::Outcome::kLost:
      // It may have run on the leader: no answer rather than a wrong one, as a RESP client
      // relayed to a leader that goes away is closed.
      return Close();
  }
}

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
