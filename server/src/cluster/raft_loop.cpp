// RaftNode's loop thread: libraft 0.15 and its libuv I/O. Everything here runs on that
// thread, except Loop::Open (before the thread starts).
#include "cluster/raft_loop.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "cluster/little_endian.h"
#include "cluster/raft_nodelay.h"

namespace latch::cluster {
namespace {

// libraft 0.15 reports a Raft port it cannot bind with an empty message: a bind of the same
// address, just before, names the cause ("Address already in use"). Empty when it binds.
std::string RaftAddressBindError(const std::string& address) {
  const auto colon = address.rfind(':');
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  if (colon == std::string::npos ||
      ::inet_pton(AF_INET, address.substr(0, colon).c_str(), &sa.sin_addr) != 1) {
    return {};
  }
  sa.sin_port = htons(static_cast<std::uint16_t>(std::atoi(address.c_str() + colon + 1)));
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return {};
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);  // as libuv binds
  std::string error;
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) != 0) {
    error = std::strerror(errno);
  }
  ::close(fd);
  return error;
}

using Clock = std::chrono::steady_clock;

// An entry as stored: [term: 8][payload length: 8][payload][zeros to a multiple of 8].
// The term it was proposed in, because libraft's apply callback is given the buffer alone
// (and a follower's current term may be newer than the entry's). The padding, because
// libraft's segment encoder requires every entry's length to be a multiple of 8 (an assert
// that release builds compile out: an odd length is written as a batch that the next
// raft_start rejects as corrupt, "entries count ... in preamble is too high").
constexpr std::size_t kHeaderBytes = 16;
std::size_t PaddedSize(std::size_t payload) { return kHeaderBytes + (payload + 7) / 8 * 8; }

ProposeStatus StatusOf(int rv) {
  switch (rv) {
    case 0:
      return ProposeStatus::kOk;
    case RAFT_NOTLEADER:
      return ProposeStatus::kNotLeader;
    case RAFT_LEADERSHIPLOST:
      return ProposeStatus::kLeadershipLost;
    case RAFT_SHUTDOWN:
      return ProposeStatus::kShutdown;
    default:
      return ProposeStatus::kFailed;
  }
}

NodeStatus::Role RoleOf(int state) {
  switch (state) {
    case RAFT_FOLLOWER:
      return NodeStatus::Role::kFollower;
    case RAFT_CANDIDATE:
      return NodeStatus::Role::kCandidate;
    case RAFT_LEADER:
      return NodeStatus::Role::kLeader;
    default:
      return NodeStatus::Role::kUnavailable;
  }
}

void Finish(const RaftNode::Done& done, ProposeStatus status, EntryId id, std::string error) {
  if (done) done(ProposeResult{status, id, std::move(error)});
}

}  // namespace

// The lease a committed round trip gives: followers that acknowledged an entry appended at
// `start` grant no vote before start + election_timeout on their clocks (docs/CLUSTER.md).
// A fifth of the timeout is kept back for what that bound ignores: libuv's cached loop time
// in whole milliseconds (a follower stamps its timer with a time that can be older than the
// message by the work done before it in the same loop iteration), and clock rate
// differences between machines.
static Clock::duration LeaseSpan(const RaftNodeOptions& o) {
  return o.election_timeout - o.election_timeout / 5;
}

void RaftNode::Loop::Open() {
  auto fail = [&](const std::string& what, const char* msg) {
    throw std::runtime_error("raft node " + std::to_string(options.id) + ": " + what + ": " + msg);
  };
  const std::string dir = options.dir.string();  // raft_uv_init copies it
  int rv = uv_loop_init(&uv);
  if (rv != 0) fail("uv_loop_init", uv_strerror(rv));
  if ((rv = raft_uv_tcp_init(&transport, &uv)) != 0) {
    uv_loop_close(&uv);
    fail("raft_uv_tcp_init", raft_strerror(rv));
  }
  DisableNagle(&transport);
  if ((rv = raft_uv_init(link.io(), &uv, dir.c_str(), &transport)) != 0) {
    std::string msg = link.io()->errmsg;
    raft_uv_tcp_close(&transport);
    uv_loop_close(&uv);
    fail("raft_uv_init", msg.c_str());
  }
  fsm.version = 1;
  fsm.data = this;
  fsm.apply = FsmApply;
  fsm.snapshot = FsmSnapshot;
  fsm.restore = FsmRestore;
  if ((rv = raft_init(&raft, link.io(), &fsm, options.id, options.address.c_str())) != 0) {
    std::string msg = raft_errmsg(&raft);
    raft_uv_close(link.io());
    raft_uv_tcp_close(&transport);
    uv_loop_close(&uv);
    fail("raft_init", msg.c_str());
  }
  raft.data = this;
  link.Install(&uv);  // after raft_init: from here on raft_close closes the io through it
  // From here on, a failure closes libraft through the loop (raft_close is asynchronous).
  auto close_and_fail = [&](const std::string& what, std::string msg) {
    raft_close(&raft, [](struct raft* r) {
      auto* self = static_cast<Loop*>(r->data);
      raft_uv_close(self->link.io());
      raft_uv_tcp_close(&self->transport);
    });
    uv_run(&uv, UV_RUN_DEFAULT);
    uv_loop_close(&uv);
    fail(what, msg.c_str());
  };
  raft_configuration conf;
  raft_configuration_init(&conf);
  for (const Peer& p : options.peers) {
    if ((rv = raft_configuration_add(&conf, p.id, p.address.c_str(), RAFT_VOTER)) != 0) {
      raft_configuration_close(&conf);
      close_and_fail("peer " + std::to_string(p.id), raft_strerror(rv));
    }
  }
  // RAFT_CANTBOOTSTRAP: the directory already holds state (a restart); it wins over `peers`.
  // No peers: a node joining a running cluster, which must not bootstrap a configuration of
  // its own; it waits for the leader's RAFT ADD (docs/CLUSTER.md, "Membership").
  rv = options.peers.empty() ? RAFT_CANTBOOTSTRAP : raft_bootstrap(&raft, &conf);
  raft_configuration_close(&conf);
  if (rv != 0 && rv != RAFT_CANTBOOTSTRAP) close_and_fail("raft_bootstrap", raft_errmsg(&raft));
  raft_set_election_timeout(&raft, static_cast<unsigned>(options.election_timeout.count()));
  raft_set_heartbeat_timeout(&raft, static_cast<unsigned>(options.heartbeat_interval.count()));
  raft_set_snapshot_threshold(&raft, options.snapshot_threshold);
  raft_set_snapshot_trailing(&raft, options.snapshot_trailing);
  raft_set_install_snapshot_timeout(
      &raft, static_cast<unsigned>(options.install_snapshot_timeout.count()));
  // A node back from a partition asks "would you vote?" before bumping its term, so it does
  // not depose a healthy leader.
  raft_set_pre_vote(&raft, true);
  // Loads the log (and restores the last snapshot through FsmRestore) and binds the port.
  if (const std::string taken = RaftAddressBindError(options.address); !taken.empty()) {
    close_and_fail("raft-addr " + options.address, taken);
  }
  if ((rv = raft_start(&raft)) != 0) {
    std::string msg = raft_errmsg(&raft);
    close_and_fail("raft_start on " + options.address, msg.empty() ? raft_strerror(rv) : msg);
  }
  uv_async_init(&uv, &wake, [](uv_async_t* h) { static_cast<Loop*>(h->data)->Drain(); });
  wake.data = this;
  uv_check_init(&uv, &check);
  check.data = this;
  uv_check_start(&check, [](uv_check_t* h) { static_cast<Loop*>(h->data)->AfterIteration(); });
  if (options.leader_probe && RaftStateEditsSupported()) {
    probe = std::make_unique<LeaderProbe>(&uv, &raft, options.heartbeat_interval);
  }
  Publish();
}

void RaftNode::Loop::Run() {
  // libuv writes to sockets with writev(), which raises SIGPIPE when a peer has gone; blocked
  // in this thread (the only one writing to Raft sockets), the write fails with EPIPE instead.
  // Per thread, so the embedding process's own signal handling is left alone.
  sigset_t pipe;
  sigemptyset(&pipe);
  sigaddset(&pipe, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
  uv_run(&uv, UV_RUN_DEFAULT);
  uv_loop_close(&uv);
  std::lock_guard lock(mu);
  status = NodeStatus{};
  lease_until = {};
  peers.clear();
}

void RaftNode::Loop::Drain() {
  std::deque<Queued> batch;
  std::deque<std::function<void(bool)>> work;
  bool stop;
  {
    std::lock_guard lock(mu);
    batch.swap(queue);
    work.swap(tasks);
    stop = stop_requested;
  }
  for (auto& task : work) task(stop || closing);
  for (Queued& q : batch) {
    if (stop || closing) {
      Finish(q.done, ProposeStatus::kShutdown, {}, "the node is stopping");
    } else if (q.barrier) {
      SubmitBarrier(std::move(q.done), false);
    } else {
      SubmitApply(std::move(q.payload), std::move(q.done));
    }
  }
  if (stop && !closing) MaybeClose();
}

// libraft 0.15 fires its I/O close callback without waiting for a log truncation that runs on
// libuv's thread pool (uvMaybeFireCloseCb only asserts that uv->truncate_work.data is NULL,
// and Debian builds without asserts); the truncation's after-work callback then reads the
// `struct uv` that raft_uv_close freed, and would fire the close callback a second time. Seen
// as a SIGSEGV in uvTruncateAfterWorkCb in about one chaos run in twenty: a deposed leader
// stopping while the new leader's entries truncated its uncommitted ones. So the close waits
// for a loop iteration with no request in flight (thread-pool work and fs requests are the
// loop's active requests; a truncation still waiting on its barrier is dropped by the close
// itself, uvTruncateBarrierCb), at most 5 s, on every stop: any node can be truncating.
void RaftNode::Loop::MaybeClose() {
  const auto now = Clock::now();
  if (close_wanted_at == Clock::time_point{}) {
    close_wanted_at = now;
    // The leader probe's premise (docs/CLUSTER.md, "Failover"): a leader whose Raft listener
    // closes serves nothing any more. raft_close below closes it, so the lease goes first.
    lease = {};
    std::lock_guard lock(mu);
    lease_until = {};
  }
  if (uv.active_reqs.count != 0 && now - close_wanted_at < std::chrono::seconds(5)) return;
  closing = true;
  if (probe) probe->Close();
  uv_close(reinterpret_cast<uv_handle_t*>(&check), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&wake), nullptr);
  raft_close(&raft, [](struct raft* r) {
    auto* self = static_cast<Loop*>(r->data);
    raft_uv_close(self->link.io());
    raft_uv_tcp_close(&self->transport);
  });
}

void RaftNode::Loop::SubmitApply(std::string payload, Done done) {
  // libraft frees the entry's buffer with raft_free once it owns it (raft_apply returned 0).
  raft_buffer buf;
  buf.len = PaddedSize(payload.size());
  buf.base = raft_calloc(1, buf.len);
  if (buf.base == nullptr) return Finish(done, ProposeStatus::kFailed, {}, "out of memory");
  char* out = static_cast<char*>(buf.base);
  StoreLeU64(out, raft.current_term);
  StoreLeU64(out + 8, payload.size());
  if (!payload.empty()) std::memcpy(out + kHeaderBytes, payload.data(), payload.size());
  auto* req = new ApplyReq{{}, this, std::move(done), raft.current_term, Clock::now()};
  req->req.data = req;
  if (int rv = raft_apply(&raft, &req->req, &buf, 1, ApplyDone); rv != 0) {
    raft_free(buf.base);
    Finish(req->done, StatusOf(rv), {}, raft_strerror(rv));
    delete req;
  }
}

void RaftNode::Loop::SubmitBarrier(Done done, bool election) {
  auto* req = new BarrierReq{{}, this, std::move(done), raft.current_term, Clock::now(), election};
  req->req.data = req;
  if (int rv = raft_barrier(&raft, &req->req, BarrierDone); rv != 0) {
    if (election) barrier_term = 0;  // retried after the next loop iteration
    Finish(req->done, StatusOf(rv), {}, raft_strerror(rv));
    delete req;
  }
}

void RaftNode::Loop::ApplyDone(struct raft_apply* r, int status, void* /*result*/) {
  auto* req = static_cast<ApplyReq*>(r->data);
  if (status == 0) req->loop->Committed(req->term, req->start);
  Finish(req->done, StatusOf(status), {req->term, r->index},
         status == 0 ? "" : raft_strerror(status));
  delete req;
}

void RaftNode::Loop::BarrierDone(struct raft_barrier* r, int status) {
  auto* req = static_cast<BarrierReq*>(r->data);
  Loop* self = req->loop;
  if (status == 0) {
    self->Committed(req->term, req->start);
    if (req->election) self->ready_term = std::max(self->ready_term, req->term);
  }
  Finish(req->done, StatusOf(status), {req->term, r->index},
         status == 0 ? "" : raft_strerror(status));
  delete req;
}

void RaftNode::Loop::Committed(raft_term term, Clock::time_point start) {
  if (raft_state(&raft) != RAFT_LEADER || term != raft.current_term) return;
  if (raft.transfer != nullptr || start < lease_floor) return;  // StartTransfer
  if (close_wanted_at != Clock::time_point{}) return;  // stopping: MaybeClose dropped it
  lease = std::max(lease, start + LeaseSpan(options));
}

// After every loop iteration (libuv's check phase): the leader's election barrier, and the
// copy of the state that other threads read.
void RaftNode::Loop::AfterIteration() {
  if (closing) return;
  if (close_wanted_at != Clock::time_point{}) {
    MaybeClose();
    return;
  }
  if (raft_state(&raft) == RAFT_LEADER) {
    // libraft 0.15 appends no entry of its own when elected: entries of earlier terms commit
    // only with one of the new term, so the new leader proposes a barrier.
    if (barrier_term != raft.current_term) {
      barrier_term = raft.current_term;
      SubmitBarrier(nullptr, true);
    }
  } else {
    lease = {};
  }
  if (probe) probe->Update();
  Publish();
}

void RaftNode::Loop::Publish() {
  raft_id leader_id = 0;
  const char* leader_address = nullptr;
  raft_leader(&raft, &leader_id, &leader_address);
  const int state = raft_state(&raft);
  std::lock_guard lock(mu);
  status.role = RoleOf(state);
  status.term = raft.current_term;
  status.leader_id = leader_id;
  if (leader_address == nullptr) {
    status.leader_address.clear();
  } else if (status.leader_address != leader_address) {
    status.leader_address = leader_address;
  }
  status.leader_ready = state == RAFT_LEADER && ready_term == raft.current_term;
  status.commit_index = raft.commit_index;
  status.applied_index = raft_last_applied(&raft);
  status.last_index = raft_last_index(&raft);
  status.snapshot_index = raft.log.snapshot.last_index;
  lease_until = lease;
  PublishPeers(state);
  PublishMembers();
  CountLeaderChange();
}

// Under mu. libraft clears recent_recv once per election timeout (its contact-quorum check),
// so the time a follower was last heard from is sampled here, after every loop iteration.
void RaftNode::Loop::PublishPeers(int state) {
  if (state != RAFT_LEADER || raft.leader_state.progress == nullptr) {
    peers.clear();
    return;
  }
  const Clock::time_point now = Clock::now();
  std::size_t n = 0;
  for (unsigned i = 0; i < raft.configuration.n; ++i) {
    const raft_server& server = raft.configuration.servers[i];
    if (server.id == raft.id) continue;
    const raft_progress& progress = raft.leader_state.progress[i];
    if (n == peers.size() || peers[n].id != server.id) {
      peers.insert(peers.begin() + static_cast<std::ptrdiff_t>(n), PeerProgress{server.id});
    }
    peers[n].match_index = progress.match_index;
    if (progress.recent_recv) peers[n].last_heard = now;
    ++n;
  }
  peers.resize(n);
}

int RaftNode::Loop::FsmApply(raft_fsm* f, const raft_buffer* buf, void** result) {
  auto* self = static_cast<Loop*>(f->data);
  *result = nullptr;
  const char* base = static_cast<const char*>(buf->base);
  if (buf->len < kHeaderBytes || PaddedSize(LoadLeU64(base + 8)) != buf->len) {
    return RAFT_MALFORMED;
  }
  // libraft sets last_applied after this callback returns: the entry is the one after it.
  const EntryId id{LoadLeU64(base), raft_last_applied(&self->raft) + 1};
  self->sm.Apply(id, std::string_view(base + kHeaderBytes, LoadLeU64(base + 8)));
  return 0;
}

int RaftNode::Loop::FsmSnapshot(raft_fsm* f, raft_buffer* bufs[], unsigned* n_bufs) {
  auto* self = static_cast<Loop*>(f->data);
  const std::optional<std::string> taken = self->sm.Snapshot();
  if (!taken) return RAFT_BUSY;  // libraft retries after its next apply
  const std::string& state = *taken;
  // fsm version 1: libraft owns both allocations and frees them with raft_free.
  auto* out = static_cast<raft_buffer*>(raft_malloc(sizeof(raft_buffer)));
  if (out == nullptr) return RAFT_NOMEM;
  out->len = state.size();
  out->base = raft_malloc(std::max<std::size_t>(state.size(), 1));
  if (out->base == nullptr) {
    raft_free(out);
    return RAFT_NOMEM;
  }
  if (!state.empty()) std::memcpy(out->base, state.data(), state.size());
  *bufs = out;
  *n_bufs = 1;
  return 0;
}

int RaftNode::Loop::FsmRestore(raft_fsm* f, raft_buffer* buf) {
  auto* self = static_cast<Loop*>(f->data);
  if (!self->sm.Restore(std::string_view(static_cast<const char*>(buf->base), buf->len))) {
    return RAFT_MALFORMED;  // libraft still owns the buffer on failure
  }
  raft_free(buf->base);  // on success the buffer is the FSM's to free
  return 0;
}

}  // namespace latch::cluster
