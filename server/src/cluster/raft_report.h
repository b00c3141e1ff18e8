#pragma once
// What RAFT STATUS and /metrics report about a cluster node (cluster_node.h fills it): the
// node's Raft state, and the configuration with the leader's view of each member. Plain data.
#include <cstdint>
#include <string>
#include <vector>

namespace latch::cluster {

struct RaftReport {
  std::uint64_t id = 0;
  const char* role = "unavailable";  // leader, follower, candidate, unavailable
  std::uint64_t term = 0;
  std::uint64_t leader_id = 0;  // 0: none known
  std::string leader_address;   // its Raft address
  bool serving = false;         // this node leads and accepts writes
  std::uint64_t commit_index = 0;
  std::uint64_t applied_index = 0;
  std::uint64_t last_index = 0;
  std::uint64_t snapshot_index = 0;
  std::uint64_t leader_changes = 0;
  struct Member {
    std::uint64_t id = 0;
    std::string address;         // Raft address
    const char* role = "voter";  // voter, standby, spare
    bool self = false;
    // On the leader only (has_progress): the last entry it reported holding, and the ms since
    // the leader last heard from it (-1: not in this term).
    bool has_progress = false;
    std::uint64_t match_index = 0;
    std::int64_t last_heard_ms = -1;
  };
  std::vector<Member> members;  // the configuration, in libraft's order
};

}  // namespace latch::cluster
