#pragma once
// What a cluster node tells clients about the cluster (ROLE, INFO replication, SENTINEL),
// without libraft or the log. Built by cluster_discovery.h from the node's state.
#include <cstdint>
#include <string>
#include <vector>

namespace latch::cluster {

struct ClusterView {
  struct Member {
    std::uint64_t id = 0;
    std::string host;  // the client address (member_table.h: replicated, or raft-peers)
    int port = 0;
    bool self = false;
    bool leader = false;  // the leader this node knows of (serving: this node itself)
    // As far as this node knows, it takes part: on the leader, a follower heard from within
    // an election timeout; elsewhere every member but a leader that is not known.
    bool online = false;
    std::uint64_t offset = 0;  // the leader's match index for it; this node: its applied index
    std::int64_t lag_s = 0;    // on the leader: seconds since the follower was last heard
  };
  std::uint64_t self_id = 0;
  // This node is the leader and accepts writes (its election barrier applied).
  bool serving = false;
  // The leader this node follows: another node it hears from, or itself while serving.
  // A leader elected but not serving yet counts as none (clients get -TRYAGAIN).
  bool leader_known = false;
  std::uint64_t term = 0;
  std::uint64_t applied_index = 0;
  std::int64_t election_timeout_ms = 0;
  std::vector<Member> members;  // the configuration's order (member_table.h, JoinMembers)

  const Member* leader() const {
    for (const Member& m : members) {
      if (m.leader) return &m;
    }
    return nullptr;
  }
};

}  // namespace latch::cluster
