// RaftNode's thread-safe side: requests queued for the loop thread (raft_loop.cpp), woken
// with uv_async_send (thread-safe by libuv's contract), and the state it publishes.
#include "cluster/raft_node.h"

#include <memory>
#include <mutex>
#include <utility>

#include "cluster/raft_loop.h"

namespace latch::cluster {
namespace {

void Refuse(const RaftNode::Done& done) {
  if (done) done(ProposeResult{ProposeStatus::kShutdown, {}, "the node is stopping"});
}

}  // namespace

RaftNode::RaftNode(RaftNodeOptions options, StateMachine& fsm)
    : loop_(std::make_unique<Loop>(std::move(options), fsm)) {
  loop_->Open();
  loop_->thread = std::thread([loop = loop_.get()] { loop->Run(); });
}

RaftNode::~RaftNode() { Stop(); }

void RaftNode::Propose(std::string payload, Done done) {
  std::unique_lock lock(loop_->mu);
  if (loop_->stop_requested) {
    lock.unlock();
    return Refuse(done);
  }
  loop_->queue.push_back({false, std::move(payload), std::move(done)});
  // Under mu: the loop thread closes `wake` only after it has seen stop_requested.
  uv_async_send(&loop_->wake);
}

std::future<ProposeResult> RaftNode::Propose(std::string payload) {
  auto promise = std::make_shared<std::promise<ProposeResult>>();
  auto future = promise->get_future();
  Propose(std::move(payload), [promise](const ProposeResult& r) { promise->set_value(r); });
  return future;
}

void RaftNode::Barrier(Done done) {
  std::unique_lock lock(loop_->mu);
  if (loop_->stop_requested) {
    lock.unlock();
    return Refuse(done);
  }
  loop_->queue.push_back({true, {}, std::move(done)});
  uv_async_send(&loop_->wake);
}

NodeStatus RaftNode::Status() const {
  std::lock_guard lock(loop_->mu);
  return loop_->status;
}

std::chrono::steady_clock::time_point RaftNode::LeaseUntil() const {
  std::lock_guard lock(loop_->mu);
  return loop_->lease_until;
}

std::vector<PeerProgress> RaftNode::Peers() const {
  std::lock_guard lock(loop_->mu);
  return loop_->peers;
}

// ---- Membership and leadership: queued for the loop thread (raft_membership.cpp) ----

bool RaftNode::Post(std::function<void(bool)> task) {
  std::lock_guard lock(loop_->mu);
  if (loop_->stop_requested) return false;
  loop_->tasks.push_back(std::move(task));
  uv_async_send(&loop_->wake);
  return true;
}

std::vector<RaftMember> RaftNode::Members() const {
  std::lock_guard lock(loop_->mu);
  return loop_->members;
}

void RaftNode::Transfer(std::uint64_t id, ChangeDone done) {
  auto shared = std::make_shared<ChangeDone>(std::move(done));
  if (!Post([loop = loop_.get(), id, shared](bool stopping) {
        if (stopping) return (*shared)("the node is stopping");
        loop->StartTransfer(id, std::move(*shared));
      })) {
    (*shared)("the node is stopping");
  }
}

void RaftNode::Add(std::uint64_t id, std::string address, ChangeDone done) {
  auto shared = std::make_shared<ChangeDone>(std::move(done));
  if (!Post([loop = loop_.get(), id, address = std::move(address), shared](bool stopping) {
        if (stopping) return (*shared)("the node is stopping");
        loop->StartAdd(id, address, std::move(*shared));
      })) {
    (*shared)("the node is stopping");
  }
}

void RaftNode::Remove(std::uint64_t id, ChangeDone done) {
  auto shared = std::make_shared<ChangeDone>(std::move(done));
  if (!Post([loop = loop_.get(), id, shared](bool stopping) {
        if (stopping) return (*shared)("the node is stopping");
        loop->StartRemove(id, std::move(*shared));
      })) {
    (*shared)("the node is stopping");
  }
}

void RaftNode::DropLinks(std::vector<std::uint64_t> peers, bool in, bool out) {
  loop_->link.Drop(std::move(peers), in, out);
}
void RaftNode::DropAllLinks(bool in, bool out) { loop_->link.DropAll(in, out); }
void RaftNode::HealLinks() { loop_->link.Heal(); }

void RaftNode::Stop() {
  if (!loop_->thread.joinable()) return;
  {
    std::lock_guard lock(loop_->mu);
    if (!loop_->stop_requested) {
      loop_->stop_requested = true;
      uv_async_send(&loop_->wake);
    }
  }
  loop_->thread.join();
}

}  // namespace latch::cluster
