#include "connection.h"

#include <algorithm>
#include <array>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

namespace latch::client_internal {
namespace asio = boost::asio;
using asio::use_awaitable;

namespace {

constexpr auto kTuple = asio::as_tuple(use_awaitable);

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// A command missing from an older server (or from latchd before it grew it).
bool IsUnknownCommand(const Reply& r) {
  return r.is_error() &&
         (StartsWith(r.str, "ERR unknown command") || StartsWith(r.str, "ERR unknown subcommand") ||
          StartsWith(r.str, "NOPROTO"));
}

// A COMMAND INFO entry exists when it is a non-empty array (unknown commands are nil).
bool Known(const Reply& info, std::size_t i) {
  return info.type == ReplyType::kArray && i < info.elements.size() &&
         info.elements[i].is_aggregate() && !info.elements[i].elements.empty();
}

}  // namespace

void PendingCall::Finish(Result<std::vector<Reply>> result) {
  if (finished) return;
  finished = true;
  if (timer) timer->cancel();
  auto cb = std::move(done);
  done = nullptr;
  if (cb) cb(std::move(result));
}

Connection::Connection(asio::io_context& ctx, const ClientOptions& options, LeaderView* leaders,
                       std::uint64_t seed, CapabilitySink on_capabilities)
    : ctx_(ctx),
      options_(options),
      leaders_(leaders),
      endpoint_(options.endpoint),
      on_capabilities_(std::move(on_capabilities)),
      rng_(seed),
      reader_(options.reader_limits),
      backoff_timer_(ctx) {}

void Connection::Submit(std::shared_ptr<PendingCall> call) {
  if (state_ == State::kClosed) {
    call->Finish(Error{make_error_code(Errc::kClientClosed), ""});
    return;
  }
  call->timer = std::make_unique<asio::steady_timer>(ctx_, call->timeout);
  call->timer->async_wait([weak = weak_from_this(), call](boost::system::error_code ec) {
    if (ec) return;  // cancelled: the call finished
    if (auto self = weak.lock()) self->OnTimeout(call);
  });
  outbox_.push_back(std::move(call));
  if (state_ == State::kIdle) {
    state_ = State::kConnecting;
    asio::co_spawn(ctx_, Run(), asio::detached);
  } else if (state_ == State::kReady) {
    StartWrite();
  }
}

void Connection::Shutdown(const Error& why) {
  state_ = State::kClosed;
  backoff_timer_.cancel();
  FailOutbox(why);
  Break(why);
}

std::chrono::milliseconds Connection::NextBackoff() {
  // Exponential up to backoff_max, then "equal jitter": half fixed, half random, so that
  // clients cut off together do not reconnect together.
  auto delay = options_.backoff_min;
  for (int i = 1; i < failures_ && delay < options_.backoff_max; ++i) delay *= 2;
  delay = std::min(delay, options_.backoff_max);
  auto half = delay.count() / 2;
  std::uniform_int_distribution<std::int64_t> jitter(0, half);
  return std::chrono::milliseconds(delay.count() - half + jitter(rng_));
}

asio::awaitable<void> Connection::Run() {
  auto self = shared_from_this();
  // Each round is one connection; rounds continue only while calls are waiting.
  for (;;) {
    if (state_ == State::kClosed) co_return;
    state_ = State::kConnecting;
    bool electing = false;
    Result<Capabilities> caps = co_await Open(&electing);
    if (state_ == State::kClosed) co_return;
    if (!caps.ok()) {
      ++failures_;
      // No node leads yet (an election): the calls wait for one, each up to its timeout.
      if (!electing) FailOutbox(caps.error());
      co_await Pause();
      if (state_ == State::kClosed) co_return;
      state_ = State::kIdle;
      if (outbox_.empty()) co_return;
      continue;
    }
    failures_ = 0;
    if (on_capabilities_) on_capabilities_(caps.value());
    state_ = State::kReady;
    StartWrite();
    co_await ReadLoop(socket_);
    if (state_ == State::kClosed) co_return;
    if (redirect_) {
      // Left to find the leader: not at once, a node that leads but is not ready yet (TRYAGAIN)
      // would answer the same.
      redirect_ = false;
      requeued_ = 0;
      ++failures_;
      co_await Pause();
      if (state_ == State::kClosed) co_return;
    }
    state_ = State::kIdle;
    if (outbox_.empty()) co_return;
  }
}

asio::awaitable<void> Connection::Pause() {
  state_ = State::kBackoff;
  backoff_timer_.expires_after(NextBackoff());
  co_await backoff_timer_.async_wait(kTuple);
}

asio::awaitable<Result<Capabilities>> Connection::OpenTo(const Endpoint& endpoint) {
  endpoint_ = endpoint;
  std::string tls_error;
  asio::ssl::context* tls = endpoint.tls ? TlsContext(&tls_error) : nullptr;
  auto socket = std::make_shared<Socket>(ctx_, tls);
  socket_ = socket;
  // (Not a ?: around co_await: GCC 12 destroys its result twice.)
  Result<Capabilities> caps(Errc::kConnectFailed, endpoint.ToString() + ": TLS: " + tls_error);
  if (tls_error.empty()) caps = co_await Connect(socket);
  if (!caps.ok() && socket_ == socket) {
    boost::system::error_code ignored;
    socket->close(ignored);
    socket_.reset();
  }
  co_return caps;
}

asio::awaitable<Result<Capabilities>> Connection::Open(bool* electing) {
  if (leaders_ == nullptr) co_return co_await OpenTo(options_.endpoint);
  // Bounded: each node once, plus the leaders they name (a node naming another that names a
  // third... stops after as many hops as there are nodes).
  std::vector<Endpoint> order = leaders_->Candidates();
  Result<Capabilities> last(Errc::kConnectFailed, "no node to connect to");
  const std::size_t max_tries = 2 * leaders_->size() + 1;
  for (std::size_t i = 0; i < order.size() && i < max_tries; ++i) {
    Result<Capabilities> caps = co_await OpenTo(order[i]);
    if (state_ == State::kClosed) co_return caps;
    if (!caps.ok()) {
      if (i == 0) leaders_->ForgetLeader();
      last = caps;
      continue;
    }
    if (role_.kind == NodeRole::Kind::kLeader) {
      leaders_->SetLeader(order[i]);
      co_return caps;
    }
    boost::system::error_code ignored;
    socket_->close(ignored);
    socket_.reset();
    // A node answered but does not lead: the nodes are up, the leader is not (yet); the calls
    // wait for it rather than fail (a follower still names a killed leader for an election
    // timeout). Only when no node answers at all do they fail at once.
    if (role_.kind != NodeRole::Kind::kNotServer) *electing = true;
    if (role_.kind == NodeRole::Kind::kFollower) {
      // Ask the node it names next (once: it may be in the list already, later).
      leaders_->SetLeader(role_.leader);
      order.insert(order.begin() + static_cast<std::ptrdiff_t>(i) + 1, role_.leader);
      last = Result<Capabilities>(Errc::kConnectFailed, order[i].ToString() + ": a replica of " +
                                                            role_.leader.ToString() +
                                                            ", which did not answer as leader");
    } else {
      last = Result<Capabilities>(Errc::kConnectFailed,
                                  order[i].ToString() + ": knows no leader (an election?)");
    }
  }
  leaders_->ForgetLeader();
  co_return last;
}

asio::awaitable<Result<Capabilities>> Connection::Connect(std::shared_ptr<Socket> socket) {
  // The whole connect and handshake is bounded: the deadline closes the socket, which fails
  // whatever operation is pending.
  auto timed_out = std::make_shared<bool>(false);
  asio::steady_timer deadline(ctx_, options_.connect_timeout);
  deadline.async_wait([socket, timed_out](boost::system::error_code ec) {
    if (ec) return;
    *timed_out = true;
    boost::system::error_code ignored;
    socket->close(ignored);
  });
  const Endpoint& ep = endpoint_;
  auto fail = [&](Errc code, std::string what) {
    if (*timed_out) code = Errc::kConnectFailed, what = "connect timed out: " + what;
    return Result<Capabilities>(code, ep.ToString() + ": " + what);
  };

  asio::ip::tcp::resolver resolver(ctx_);
  auto [rec, endpoints] = co_await resolver.async_resolve(ep.host, std::to_string(ep.port), kTuple);
  if (rec) co_return fail(Errc::kConnectFailed, rec.message());
  auto [cec, connected] = co_await asio::async_connect(socket->tcp(), endpoints, kTuple);
  (void)connected;
  if (cec || *timed_out) co_return fail(Errc::kConnectFailed, cec.message());
  boost::system::error_code ignored;
  socket->tcp().set_option(asio::ip::tcp::no_delay(true), ignored);
  if (socket->tls() != nullptr) {
    if (auto error = co_await Handshake(*socket)) co_return fail(Errc::kConnectFailed, *error);
  }

  reader_ = protocol::ReplyReader(options_.reader_limits);
  std::array<char, 4096> buf;
  // One request, one reply, before the connection carries any call.
  auto round_trip = [&](const Command& cmd) -> asio::awaitable<Result<Reply>> {
    std::string bytes = cmd.Encoded();
    auto [wec, wn] = co_await asio::async_write(*socket, asio::buffer(bytes), kTuple);
    (void)wn;
    if (wec) co_return fail(Errc::kConnectFailed, wec.message()).error();
    for (int reads = 0; reads < 1 << 20; ++reads) {
      Reply reply;
      auto st = reader_.Next(&reply);
      if (st == protocol::ReplyReader::Status::kReply) co_return reply;
      if (st == protocol::ReplyReader::Status::kError) {
        co_return Result<Reply>(Errc::kProtocolError, reader_.error());
      }
      auto [rec2, n] = co_await socket->async_read_some(asio::buffer(buf), kTuple);
      if (rec2) co_return fail(Errc::kConnectFailed, rec2.message()).error();
      reader_.Feed(std::string_view(buf.data(), n));
    }
    co_return Result<Reply>(Errc::kProtocolError, "handshake reply too long");
  };

  Capabilities caps;
  bool resp2 = options_.protocol != 3;
  if (!resp2) {
    Command hello("HELLO", 3);
    if (!ep.password.empty()) {
      hello.Add("AUTH").Add(ep.user.empty() ? "default" : ep.user).Add(ep.password);
    }
    if (!options_.client_name.empty()) hello.Add("SETNAME").Add(options_.client_name);
    auto r = co_await round_trip(hello);
    if (!r.ok()) co_return r.error();
    if (IsUnknownCommand(*r)) {
      resp2 = true;
    } else if (r->is_error()) {
      co_return fail(Errc::kHandshakeFailed, r->str);
    } else {
      caps.protocol = 3;
    }
  }
  if (resp2) {
    if (!ep.password.empty()) {
      Command auth("AUTH");
      if (!ep.user.empty()) auth.Add(ep.user);
      auth.Add(ep.password);
      auto r = co_await round_trip(auth);
      if (!r.ok()) co_return r.error();
      if (r->is_error()) co_return fail(Errc::kHandshakeFailed, r->str);
    }
    if (!options_.client_name.empty()) {
      // A server without CLIENT SETNAME still serves calls: its error is not fatal.
      auto r = co_await round_trip(Command("CLIENT", "SETNAME", options_.client_name));
      if (!r.ok()) co_return r.error();
    }
  }
  if (ep.db != 0) {
    auto r = co_await round_trip(Command("SELECT", ep.db));
    if (!r.ok()) co_return r.error();
    if (r->is_error()) co_return fail(Errc::kHandshakeFailed, r->str);
  }
  auto info = co_await round_trip(Command("COMMAND", "INFO", "LOCK.ACQUIRE", "DELEX", "EVALSHA"));
  if (!info.ok()) co_return info.error();
  if (info->is_error()) {
    // No COMMAND: assume scripting and let a missing EVALSHA surface as the server's error.
    caps.scripting = true;
  } else {
    caps.lock_commands = Known(*info, 0);
    caps.delex = Known(*info, 1);
    caps.scripting = Known(*info, 2);
  }
  if (leaders_ != nullptr) {
    auto role = co_await round_trip(Command("ROLE"));
    if (!role.ok()) co_return role.error();
    role_ = RoleFromReply(*role, ep);
  }
  if (*timed_out) co_return fail(Errc::kConnectFailed, "handshake");
  co_return caps;
}

asio::awaitable<void> Connection::ReadLoop(std::shared_ptr<Socket> socket) {
  auto self = shared_from_this();
  std::array<char, 16384> buf;
  for (;;) {
    auto [ec, n] = co_await socket->async_read_some(asio::buffer(buf), kTuple);
    if (socket != socket_) co_return;  // already broken (timeout, shutdown)
    if (ec) {
      Break(Error{make_error_code(Errc::kConnectionLost), ec.message()});
      co_return;
    }
    reader_.Feed(std::string_view(buf.data(), n));
    // Bounded by the bytes just fed: every reply consumes some of them.
    for (;;) {
      Reply reply;
      auto st = reader_.Next(&reply);
      if (st == protocol::ReplyReader::Status::kNeedMore) break;
      if (st == protocol::ReplyReader::Status::kError) {
        Break(Error{make_error_code(Errc::kProtocolError), reader_.error()});
        co_return;
      }
      if (reply.type == ReplyType::kPush) continue;  // out of band, answers no call
      if (inflight_.empty()) {
        Break(Error{make_error_code(Errc::kProtocolError), "reply with no call waiting for it"});
        co_return;
      }
      auto call = inflight_.front();
      const bool not_leader = leaders_ != nullptr && IsNotLeaderReply(reply);
      call->replies.push_back(std::move(reply));
      if (call->replies.size() == call->expected) {
        inflight_.pop_front();
        if (!not_leader || !Redirect(call)) call->Finish(std::move(call->replies));
        if (socket != socket_) co_return;  // the callback shut the client down
      }
    }
    if (redirect_ && inflight_.empty()) {
      Break(Error{make_error_code(Errc::kConnectionLost), "not the leader"});
      co_return;
    }
  }
}

bool Connection::Redirect(const std::shared_ptr<PendingCall>& call) {
  // Not this node: the next connection looks for the leader again.
  redirect_ = true;
  leaders_->ForgetLeader();
  constexpr int kMaxRedirects = 64;  // with the backoff, well past any election
  if (call->expected != 1 || call->redirects >= kMaxRedirects) return false;
  ++call->redirects;
  call->replies.clear();
  // Before the calls submitted since, after those put back already: the order they were sent.
  // (Bounded by the outbox: a call put back may have timed out and left it since.)
  requeued_ = std::min(requeued_, outbox_.size());
  outbox_.insert(outbox_.begin() + static_cast<std::ptrdiff_t>(requeued_++), call);
  return true;
}

void Connection::StartWrite() {
  if (writing_ || redirect_ || state_ != State::kReady || !socket_ || outbox_.empty()) return;
  write_buf_.clear();
  while (!outbox_.empty()) {
    auto call = std::move(outbox_.front());
    outbox_.pop_front();
    if (call->finished) continue;
    write_buf_ += call->bytes;
    inflight_.push_back(std::move(call));
  }
  if (write_buf_.empty()) return;
  writing_ = true;
  asio::async_write(
      *socket_, asio::buffer(write_buf_),
      [self = shared_from_this(), socket = socket_](boost::system::error_code ec, std::size_t) {
        if (socket != self->socket_) return;  // that connection is gone
        self->writing_ = false;
        if (ec) {
          self->Break(Error{make_error_code(Errc::kConnectionLost), ec.message()});
          return;
        }
        self->StartWrite();
      });
}

void Connection::OnTimeout(const std::shared_ptr<PendingCall>& call) {
  if (call->finished) return;
  Error timeout{make_error_code(Errc::kTimeout),
                "no reply within " + std::to_string(call->timeout.count()) + " ms"};
  for (auto it = outbox_.begin(); it != outbox_.end(); ++it) {
    if (*it == call) {
      outbox_.erase(it);
      call->Finish(timeout);
      return;
    }
  }
  call->Finish(timeout);
  // Its reply may still come: the connection cannot be trusted to stay in step, so it goes.
  Break(Error{make_error_code(Errc::kConnectionLost), "connection closed after a call timed out"});
}

void Connection::Break(const Error& why) {
  // Run() resumes once the reader sees the closed socket and reconnects if calls wait; until
  // then new calls only queue.
  if (state_ == State::kReady) state_ = State::kConnecting;
  if (socket_) {
    boost::system::error_code ignored;
    socket_->close(ignored);
    socket_.reset();
  }
  writing_ = false;
  auto calls = std::move(inflight_);
  inflight_.clear();
  for (auto& call : calls) call->Finish(why);
}

void Connection::FailOutbox(const Error& why) {
  auto calls = std::move(outbox_);
  outbox_.clear();
  for (auto& call : calls) call->Finish(why);
}

}  // namespace latch::client_internal
