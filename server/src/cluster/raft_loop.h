#pragma once
// RaftNode's libraft side (raft_loop.cpp): the objects its thread owns, the queue other
// threads fill and the copy of the state they read (raft_node.cpp). Internal to
// latch_cluster: this header brings in raft.h and uv.h, which raft_node.h keeps out.
#include <uv.h>

// libraft 0.15's headers declare C functions without extern "C" guards of their own.
extern "C" {
#include <raft.h>
#include <raft/uv.h>
}

#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cluster/leader_probe.h"
#include "cluster/raft_link_fault.h"
#include "cluster/raft_node.h"

namespace latch::cluster {

struct RaftNode::Loop {
  using Clock = std::chrono::steady_clock;

  // A request from another thread, waiting for the loop thread.
  struct Queued {
    bool barrier;
    std::string payload;
    Done done;
  };
  // A request handed to libraft; deleted in its callback. `start`: when it was appended,
  // before any AppendEntries carrying it left (the lease counts from there).
  struct ApplyReq {
    struct raft_apply req;
    Loop* loop;
    Done done;
    raft_term term;
    Clock::time_point start;
  };
  struct BarrierReq {
    struct raft_barrier req;
    Loop* loop;
    Done done;
    raft_term term;
    Clock::time_point start;
    bool election;  // the barrier a new leader proposes to commit an entry of its term
  };

  Loop(RaftNodeOptions o, StateMachine& m) : options(std::move(o)), sm(m) {}

  void Open();
  void Run();
  void Drain();
  void MaybeClose();  // raft_close once no libuv request is in flight (raft_loop.cpp says why)
  void SubmitApply(std::string payload, Done done);
  void SubmitBarrier(Done done, bool election);
  void Committed(raft_term term, Clock::time_point start);
  void AfterIteration();
  void Publish();
  void PublishPeers(int state);

  static int FsmApply(raft_fsm* fsm, const raft_buffer* buf, void** result);
  static int FsmSnapshot(raft_fsm* fsm, raft_buffer* bufs[], unsigned* n_bufs);
  static int FsmRestore(raft_fsm* fsm, raft_buffer* buf);
  static void ApplyDone(struct raft_apply* req, int status, void* result);
  static void BarrierDone(struct raft_barrier* req, int status);

  RaftNodeOptions options;
  StateMachine& sm;
  uv_loop_t uv{};
  uv_async_t wake{};
  uv_check_t check{};
  raft_uv_transport transport{};
  RaftLinkFault link;  // its raft_io is libraft's (link.io()); TEST.FAULT RAFT-DROP cuts it
  raft_fsm fsm{};
  struct raft raft {};
  std::thread thread;

  std::mutex mu;  // guards the five fields below, shared with other threads
  std::deque<Queued> queue;
  bool stop_requested = false;
  NodeStatus status;
  Clock::time_point lease_until{};
  std::vector<PeerProgress> peers;  // the leader's followers (PublishPeers)

  // Loop thread only.
  bool closing = false;
  Clock::time_point close_wanted_at{};  // when Stop was seen (MaybeClose)
  raft_term barrier_term = 0;  // the term whose election barrier was proposed
  raft_term ready_term = 0;    // the term whose election barrier was applied
  Clock::time_point lease{};   // published as lease_until
  std::unique_ptr<LeaderProbe> probe;  // null: raft-leader-probe no, or not libraft 0.15

  // Membership and leadership (raft_membership.cpp).
  struct ChangeReq {
    struct raft_change req;
    Loop* loop;
    ChangeDone done;
    raft_id promote;  // after raft_add: the spare to make a voter
  };
  struct TransferReq {
    struct raft_transfer req;
    Loop* loop;
    ChangeDone done;
  };
  // Work queued by RaftNode::Transfer/Add/Remove; `stopping`: the node closes, refuse.
  std::deque<std::function<void(bool stopping)>> tasks;  // under mu
  std::vector<RaftMember> members;                       // under mu (PublishMembers)
  // Loop thread: entries appended before it give no lease (a transfer may have let another
  // node start an election since).
  Clock::time_point lease_floor{};
  void StartTransfer(raft_id id, ChangeDone done);
  void StartAdd(raft_id id, const std::string& address, ChangeDone done);
  void StartRemove(raft_id id, ChangeDone done);
  raft_id MostUpToDateVoter();
  void PublishMembers();       // under mu
  void CountLeaderChange();    // under mu, after status is published
  raft_id counted_leader = 0;  // under mu: the leader (and term) last counted
  raft_term counted_term = 0;
  static void ChangeDoneCb(struct raft_change* req, int status);
  static void TransferDoneCb(struct raft_transfer* req);
};

}  // namespace latch::cluster
