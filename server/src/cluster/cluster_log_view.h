#pragma once
// What a cluster node tells clients about the cluster (ROLE), without libraft or the log.
#include <cstdint>
#include <string>
#include <vector>

namespace latch::cluster {

// What ROLE reports (a Redis master's or replica's answer).
struct RoleView {
  bool leader = false;
  std::string leader_host;  // empty: no leader known
  int leader_port = 0;
  std::uint64_t offset = 0;  // the applied index
  struct Replica {
    std::string host;
    int port;
  };
  std::vector<Replica> replicas;  // the leader's followers
};

}  // namespace latch::cluster
