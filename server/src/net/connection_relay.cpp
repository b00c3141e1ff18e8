// Follower forwarding (docs/CLUSTER.md, "Forwarding"): a client of a Raft follower whose
// command needs the leader is relayed, for the rest of its session, to the leader's client
// port. The relay is a per-connection byte pump on the connection's own io_context:
//   client -> rbuf_ -> link (after the session replay), one write at a time, and the client
//   is read again only once the link took what came (its TCP window is the backpressure);
//   link -> out_ -> client, through the connection's own writes, after the replies it
//   answered here before; the link is read only while the client's pending output is under
//   kRelayPauseOutput, so a client that does not read makes the leader hold its replies,
//   where that session's output limits apply, and this node holds at most about 1 MB.
// The session lives on the leader: when the link ends (the leader died or stepped down,
// which closes its clients) or this node follows another leader, the client is closed, as
// after a Redis failover; it reconnects and finds the new leader.
#include <spdlog/logger.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <mutex>

#include "cluster_node.h"
#include "commands/leader_session.h"
#include "net/connection.h"
#include "net/leader_relay.h"
#include "net/worker.h"

namespace latch {
namespace {
// The leader's replies stop being read while this much output waits for the client.
constexpr std::size_t kRelayPauseOutput = 1024 * 1024;
// The client's requests stop being read while this much waits for the link (while it
// connects: afterwards one read at a time goes out before the next is taken).
constexpr std::size_t kRelayReadAhead = 1024 * 1024;
// A leader that does not accept the link within this long (an unreachable host) ends it.
constexpr std::chrono::seconds kRelayConnectTimeout{5};
constexpr std::chrono::milliseconds kRelayLeaderCheck{100};
}  // namespace

bool Connection::MaybeStartRelay(std::span<const std::string_view> args) {
  if (!state_.raft_follower.load(std::memory_order_acquire)) return false;
  // What only this node knows of the session stays here: a client that must still
  // authenticate (NOAUTH, answered here), and a MULTI, WATCH or subscription begun while no
  // leader was known (their data commands get -READONLY, as before forwarding).
  if (!session_.authenticated || session_.in_multi || session_.subscriptions != 0 ||
      !session_.watched_keys.empty()) {
    return false;
  }
  if (!RunsOnLeader(*state_.catalogue, args)) return false;
  cluster::LeaderEndpoint leader;
  if (!cluster::FollowedLeader(state_, &leader)) return false;  // no leader: -TRYAGAIN here
  relay_ = std::make_unique<RelayLink>(worker_.context());
  relay_->leader_id = leader.id;
  std::string name;
  {
    std::lock_guard lock(state_.clients.mu);  // CLIENT LIST reads it from other workers
    name = session_.info->name;
  }
  relay_->replay =
      RelaySessionReplay(relay_login_, session_.proto, name, session_.db, &relay_->replay_replies);
  state_.log->debug("Client id={} relayed to the Raft leader (node {}, {}:{})", session_.info->id,
                    leader.id, leader.host, leader.port);
  ConnectRelay(leader.host, leader.port);
  return true;
}

void Connection::ConnectRelay(const std::string& host, int port) {
  using boost::asio::ip::tcp;
  block_timer_.expires_after(kRelayConnectTimeout);
  block_timer_.async_wait([weak = weak_from_this()](const boost::system::error_code& ec) {
    auto self = weak.lock();
    if (ec || !self || self->closed_ || self->relay_->connected) return;
    self->OnRelayConnected(boost::asio::error::timed_out);
  });
  auto connected = [self = shared_from_this()](const boost::system::error_code& ec, auto&&...) {
    self->OnRelayConnected(ec);
  };
  boost::system::error_code ec;
  const auto address = boost::asio::ip::make_address(host, ec);
  if (!ec) return relay_->socket.async_connect(tcp::endpoint(address, port), connected);
  relay_->resolver.async_resolve(
      host, std::to_string(port),
      [self = shared_from_this(), connected](const boost::system::error_code& ec,
                                             const tcp::resolver::results_type& results) {
        if (ec || self->closed_) return self->OnRelayConnected(ec);
        boost::asio::async_connect(self->relay_->socket, results, connected);
      });
}

void Connection::OnRelayConnected(const boost::system::error_code& ec) {
  if (closed_ || relay_->connected) return;
  block_timer_.cancel();
  if (ec) {
    state_.log->warn("Closing client id={}: cannot reach the Raft leader (node {}) to relay it: {}",
                     session_.info->id, relay_->leader_id, ec.message());
    return Close();
  }
  boost::system::error_code ignored;
  relay_->socket.set_option(boost::asio::ip::tcp::no_delay(true), ignored);
  relay_->connected = true;
  WatchRelayLeader();
  SafePump();
}

void Connection::WatchRelayLeader() {
  block_timer_.expires_after(kRelayLeaderCheck);
  block_timer_.async_wait([weak = weak_from_this()](const boost::system::error_code& ec) {
    auto self = weak.lock();
    if (ec || !self || self->closed_) return;
    if (cluster::FollowedLeaderId(self->state_) != self->relay_->leader_id) {
      self->state_.log->debug("Closing relayed client id={}: node {} is no longer the leader",
                              self->session_.info->id, self->relay_->leader_id);
      return self->Close();
    }
    self->WatchRelayLeader();
  });
}

// Pump() of a relayed client: moves what can move in each direction, then reads.
void Connection::PumpRelay() {
  if (closed_) return;
  RelayLink& r = *relay_;
  if (r.connected && !r.sending && (!r.replay.empty() || rbuf_.size() > 0)) StartRelaySend();
  if (!writing_ && (!out_.empty() || !sealed_.empty())) StartWrite();
  if (r.leader_gone) {
    if (!writing_) Close();  // after the leader's last replies are on the wire
    return;
  }
  if (r.connected && !r.receiving && PendingOutput() < kRelayPauseOutput) StartRelayReceive();
  // rbuf_ stays put while a send from it is under way (PrepareRead may move its bytes).
  if (!reading_ && !r.sending && rbuf_.size() < kRelayReadAhead) StartRead();
  PublishBufferSizesIfChanged();
}

// The replay first, then everything the client sent from the command that switched it on.
void Connection::StartRelaySend() {
  RelayLink& r = *relay_;
  r.sending = true;
  const bool replay = !r.replay.empty();
  const std::size_t n = replay ? r.replay.size() : rbuf_.size();
  boost::asio::async_write(
      r.socket, boost::asio::buffer(replay ? r.replay.data() : rbuf_.data(), n),
      [self = shared_from_this(), replay, n](const boost::system::error_code& ec, std::size_t) {
        self->relay_->sending = false;
        if (ec || self->closed_) return self->Close();
        if (replay) {
          std::string().swap(self->relay_->replay);
        } else {
          self->rbuf_.Consume(n);
        }
        self->SafePump();
      });
}

void Connection::StartRelayReceive() {
  RelayLink& r = *relay_;
  r.receiving = true;
  r.socket.async_read_some(
      boost::asio::buffer(r.received),
      [self = shared_from_this()](const boost::system::error_code& ec, std::size_t n) {
        self->OnRelayReceived(ec, n);
      });
}

void Connection::OnRelayReceived(const boost::system::error_code& ec, std::size_t n) {
  RelayLink& r = *relay_;
  r.receiving = false;
  if (closed_) return;
  if (ec) {
    state_.log->debug(
        "Closing relayed client id={}: its link to the Raft leader (node {}) ended: {}",
        session_.info->id, r.leader_id, ec.message());
    r.leader_gone = true;
    return SafePump();
  }
  std::string_view bytes(r.received.data(), n);
  if (std::string refused; r.replay_replies > 0 && !r.SkipReplayReplies(&bytes, &refused)) {
    state_.log->warn("Closing client id={}: the Raft leader (node {}) refused its session: {}",
                     session_.info->id, r.leader_id, refused);
    return Close();
  }
  out_.append(bytes);
  SealIfLarge();
  if (CloseIfOverOutputLimit(kReadClock)) return;
  SafePump();
}

void Connection::NoteLogin(std::span<const std::string_view> args, std::size_t reply_start) {
  if (!session_.authenticated || out_.size() <= reply_start || out_[reply_start] == '-') return;
  if (std::string login = RelayLoginCommand(args); !login.empty()) relay_login_ = std::move(login);
}

}  // namespace latch
