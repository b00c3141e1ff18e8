// RaftNode's membership and leadership on its loop thread (RAFT TRANSFER, ADD, REMOVE and the
// configuration RAFT STATUS shows; docs/CLUSTER.md, "Membership and operations"), queued by
// raft_node.cpp's block of the same name. Everything here runs on the loop thread.
#include <chrono>
#include <mutex>
#include <string>
#include <utility>

#include "cluster/raft_loop.h"

namespace latch::cluster {

namespace {

RaftMember::Role MembershipRoleOf(int role) {
  switch (role) {
    case RAFT_STANDBY:
      return RaftMember::Role::kStandby;
    case RAFT_SPARE:
      return RaftMember::Role::kSpare;
    default:
      return RaftMember::Role::kVoter;
  }
}

// Why libraft refused a request: the code's text (raft_errmsg may be a stale message, as
// raft_add and raft_remove do not always write one).
std::string MembershipRefusedBy(int rv) { return raft_strerror(rv); }

}  // namespace

void RaftNode::Loop::CountLeaderChange() {
  if (status.leader_id == 0) return;
  if (status.leader_id != counted_leader || status.term != counted_term) {
    ++status.leader_changes;
    counted_leader = status.leader_id;
    counted_term = status.term;
  }
}

void RaftNode::Loop::PublishMembers() {
  members.resize(raft.configuration.n);
  for (unsigned i = 0; i < raft.configuration.n; ++i) {
    const raft_server& server = raft.configuration.servers[i];
    RaftMember& m = members[i];
    m.id = server.id;
    if (m.address != server.address) m.address = server.address;
    m.role = MembershipRoleOf(server.role);
  }
}

// The voter with the highest match index (ties: configuration order): the follower that
// can win an election soonest. 0 when there is none.
raft_id RaftNode::Loop::MostUpToDateVoter() {
  if (raft_state(&raft) != RAFT_LEADER || raft.leader_state.progress == nullptr) return 0;
  raft_id best = 0;
  raft_index best_match = 0;
  for (unsigned i = 0; i < raft.configuration.n; ++i) {
    const raft_server& server = raft.configuration.servers[i];
    if (server.id == raft.id || server.role != RAFT_VOTER) continue;
    const raft_index match = raft.leader_state.progress[i].match_index;
    if (best == 0 || match > best_match) {
      best = server.id;
      best_match = match;
    }
  }
  return best;
}

void RaftNode::Loop::StartTransfer(raft_id id, ChangeDone done) {
  if (id == 0) id = MostUpToDateVoter();
  if (id == 0) return done("there is no other voter to hand leadership to");
  // No read is answered alone from here on: the target may be elected at once, before any
  // lease this node holds would have run out (docs/CLUSTER.md, "Linearizable reads"). Entries
  // appended before now never give a lease again; libraft refuses new ones until it ends.
  lease = {};
  lease_floor = Clock::now();
  {
    std::lock_guard lock(mu);
    lease_until = {};
  }
  auto* req = new TransferReq{{}, this, std::move(done)};
  req->req.data = req;
  if (int rv = raft_transfer(&raft, &req->req, id, TransferDoneCb); rv != 0) {
    req->done(MembershipRefusedBy(rv));
    delete req;
  }
}

// libraft calls it when this node saw the target lead, after an election timeout, or when it
// stops: success is the target leading.
void RaftNode::Loop::TransferDoneCb(struct raft_transfer* r) {
  auto* req = static_cast<TransferReq*>(r->data);
  Loop* self = req->loop;
  raft_id leader = 0;
  const char* address = nullptr;
  raft_leader(&self->raft, &leader, &address);
  if (leader == r->id) {
    req->done("");
  } else if (self->closing) {
    req->done("the node is stopping");
  } else {
    req->done("node " + std::to_string(r->id) +
              " did not take leadership within the election "
              "timeout");
  }
  delete req;
}

void RaftNode::Loop::StartAdd(raft_id id, const std::string& address, ChangeDone done) {
  auto* req = new ChangeReq{{}, this, std::move(done), id};
  req->req.data = req;
  if (int rv = raft_add(&raft, &req->req, id, address.c_str(), ChangeDoneCb); rv != 0) {
    req->done(MembershipRefusedBy(rv));
    delete req;
  }
}

void RaftNode::Loop::StartRemove(raft_id id, ChangeDone done) {
  auto* req = new ChangeReq{{}, this, std::move(done), 0};
  req->req.data = req;
  if (int rv = raft_remove(&raft, &req->req, id, ChangeDoneCb); rv != 0) {
    req->done(MembershipRefusedBy(rv));
    delete req;
  }
}

// A configuration entry committed (or failed). After raft_add, the spare is made a voter in
// a second change: libraft catches its log up first, in rounds, before appending it.
void RaftNode::Loop::ChangeDoneCb(struct raft_change* r, int status) {
  auto* req = static_cast<ChangeReq*>(r->data);
  Loop* self = req->loop;
  if (status != 0) {
    req->done(raft_strerror(status));
    delete req;
    return;
  }
  const raft_id promote = std::exchange(req->promote, 0);
  if (promote == 0 || self->closing) {
    req->done(self->closing && promote != 0 ? "the node is stopping" : "");
    delete req;
    return;
  }
  if (int rv = raft_assign(&self->raft, &req->req, promote, RAFT_VOTER, ChangeDoneCb); rv != 0) {
    req->done("added as a spare but not made a voter: " + MembershipRefusedBy(rv));
    delete req;
  }
}

}  // namespace latch::cluster
