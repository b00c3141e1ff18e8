#pragma once
// A follower's watch on its leader's process (docs/CLUSTER.md, "Failover"). One idle TCP
// connection to the leader's Raft address; when it reads EOF or a reset, a second connect to
// the same address confirms the death (refused: nothing listens there any more, and a live
// leader never closes its Raft listener while it serves). On a confirmed death it makes
// libraft start an election now (raft_state_edits.h) instead of after its randomized
// election timeout. Loop thread only; libuv handles on the node's loop.
#include <uv.h>

#include <chrono>
#include <string>

#include "cluster/raft_state_edits.h"

namespace latch::cluster {

class LeaderProbe {
 public:
  // `tick`: libraft's tick period (the heartbeat interval): the stagger between followers.
  LeaderProbe(uv_loop_t* uv, struct raft* r, std::chrono::milliseconds tick)
      : uv_(uv), raft_(r), tick_(tick) {}
  LeaderProbe(const LeaderProbe&) = delete;
  LeaderProbe& operator=(const LeaderProbe&) = delete;

  // After every loop iteration: follows the current leader (opens, moves or drops the watch).
  void Update();
  // Before raft_close: closes the connections; Update does nothing after it.
  void Close();

  struct Conn;  // one connection attempt (leader_probe.cpp)

 private:
  void Open(bool confirm);
  void Drop();
  void OnConnected(Conn* c, int status);
  void OnClosedByLeader(Conn* c);
  void LeaderGone(raft_id leader);
  unsigned StaggerMs(raft_id dead_leader) const;

  uv_loop_t* uv_;
  struct raft* raft_;
  std::chrono::milliseconds tick_;
  bool closed_ = false;
  Conn* conn_ = nullptr;   // the watch or the confirming connect, at most one
  raft_id leader_ = 0;     // whom conn_ watches
  std::string address_;    // the leader's Raft address, "IPv4:port"
  std::chrono::steady_clock::time_point next_open_{};  // retry no faster than a tick
};

}  // namespace latch::cluster
