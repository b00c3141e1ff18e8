#include "cluster/leader_probe.h"

#include <netinet/in.h>

#include <cstdlib>

namespace latch::cluster {

struct LeaderProbe::Conn {
  uv_tcp_t tcp{};
  uv_connect_t connect{};
  LeaderProbe* owner = nullptr;  // null once dropped: its callbacks then only clean up
  bool confirm = false;          // the second connect that tells a dead leader from a live one
  char byte = 0;                 // read buffer: the leader sends nothing on this connection
};

namespace {

void CloseConn(LeaderProbe::Conn* c) {
  c->owner = nullptr;
  auto* h = reinterpret_cast<uv_handle_t*>(&c->tcp);
  if (!uv_is_closing(h)) {
    uv_close(h, [](uv_handle_t* closed) { delete static_cast<LeaderProbe::Conn*>(closed->data); });
  }
}

bool ParseAddress(const std::string& address, sockaddr_in* out) {
  const auto colon = address.rfind(':');
  if (colon == std::string::npos) return false;
  const int port = std::atoi(address.c_str() + colon + 1);
  return port > 0 && uv_ip4_addr(address.substr(0, colon).c_str(), port, out) == 0;
}

}  // namespace

void LeaderProbe::Update() {
  if (closed_) return;
  const raft_id leader = FollowerLeader(raft_);
  if (leader != leader_) {
    Drop();
    leader_ = leader;
    const char* a = leader != 0 ? raft_->follower_state.current_leader.address : nullptr;
    address_ = a != nullptr ? a : "";
    next_open_ = {};
  }
  if (leader_ == 0 || conn_ != nullptr || address_.empty()) return;
  if (std::chrono::steady_clock::now() < next_open_) return;
  Open(false);
}

void LeaderProbe::Close() {
  Drop();
  closed_ = true;
}

void LeaderProbe::Drop() {
  if (conn_ != nullptr) CloseConn(conn_);
  conn_ = nullptr;
}

void LeaderProbe::Open(bool confirm) {
  next_open_ = std::chrono::steady_clock::now() + tick_;
  sockaddr_in sa{};
  if (!ParseAddress(address_, &sa)) return;
  auto* c = new Conn;
  c->owner = this;
  c->confirm = confirm;
  c->tcp.data = c;
  c->connect.data = c;
  if (uv_tcp_init(uv_, &c->tcp) != 0) {
    delete c;
    return;
  }
  conn_ = c;
  const int rv = uv_tcp_connect(&c->connect, &c->tcp, reinterpret_cast<const sockaddr*>(&sa),
                                [](uv_connect_t* req, int status) {
                                  auto* conn = static_cast<Conn*>(req->data);
                                  if (conn->owner == nullptr) return;  // dropped meanwhile
                                  conn->owner->OnConnected(conn, status);
                                });
  if (rv != 0) Drop();
}

void LeaderProbe::OnConnected(Conn* c, int status) {
  if (c->confirm) {
    Drop();
    // Refused: no process listens on the leader's Raft address. Anything else (it accepted,
    // or a timeout: a dead machine, a partition) leaves the decision to libraft's timer.
    if (status == UV_ECONNREFUSED) LeaderGone(leader_);
    return;
  }
  if (status != 0) {
    Drop();  // anything but a refusal: retried after a tick
    // Refused: nothing listens there. Also the end of a race the confirming connect can lose:
    // a killed process's kernel may close the accepted sockets before the listener, so that
    // connect is accepted (and reset) and the next watch, a tick later, is the one refused.
    if (status == UV_ECONNREFUSED) LeaderGone(leader_);
    return;
  }
  uv_read_start(
      reinterpret_cast<uv_stream_t*>(&c->tcp),
      [](uv_handle_t* h, size_t, uv_buf_t* buf) {
        auto* conn = static_cast<Conn*>(h->data);
        *buf = uv_buf_init(&conn->byte, 1);
      },
      [](uv_stream_t* s, ssize_t nread, const uv_buf_t*) {
        auto* conn = static_cast<Conn*>(s->data);
        if (nread < 0 && conn->owner != nullptr) conn->owner->OnClosedByLeader(conn);
      });
}

void LeaderProbe::OnClosedByLeader(Conn*) {
  // EOF or a reset: the leader's kernel closed the socket (its process exited or was killed),
  // or libraft closed this idle connection. The confirming connect tells which, at once.
  Drop();
  Open(true);
}

void LeaderProbe::LeaderGone(raft_id leader) {
  // The watch stays down until libraft names a leader again (Update reopens it then).
  ExpireElectionTimer(raft_, leader, StaggerMs(leader));
}

// Followers that see the death at the same moment would start pre-votes in the same tick and
// could split the vote, leaving a candidate to its randomized timeout (seconds at long
// timeouts). Each waits three ticks per live voter with a lower id: the first one's pre-vote
// and vote take a few round trips, and once elected its heartbeat resets the others' timers.
// If it cannot win (a shorter log), the next one starts three ticks later and gets its vote.
unsigned LeaderProbe::StaggerMs(raft_id dead_leader) const {
  unsigned rank = 0;
  for (unsigned i = 0; i < raft_->configuration.n; ++i) {
    const raft_server& s = raft_->configuration.servers[i];
    if (s.role == RAFT_VOTER && s.id != dead_leader && s.id < raft_->id) ++rank;
  }
  return rank * 3 * static_cast<unsigned>(tick_.count());
}

}  // namespace latch::cluster
