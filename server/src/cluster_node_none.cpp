// cluster_node.h when latchd is built without libraft (LATCH_CLUSTER off).
#include <stdexcept>

#include "cluster_node.h"
#include "server_state.h"

namespace latch::cluster {

void StartNode(ServerState& s) {
  std::lock_guard lock(s.options_mu);
  if (!s.options.raft_peers.empty()) {
    throw std::runtime_error("raft-peers is set but this latchd was built without libraft");
  }
}
void StopNode(ServerState&) {}
bool View(const ServerState&, ClusterView*) { return false; }
bool LeaderKnown(const ServerState&) { return true; }
bool Failed(const ServerState&) { return false; }
bool FollowedLeader(const ServerState&, LeaderEndpoint*) { return false; }
std::uint64_t FollowedLeaderId(const ServerState&) { return 0; }
bool Report(const ServerState&, RaftReport*) { return false; }
bool DropRaftLinks(ServerState&, bool, std::vector<std::uint64_t>, bool, bool) { return false; }
bool HealRaftLinks(ServerState&) { return false; }
void Transfer(ServerState&, std::uint64_t, std::int64_t, RaftChangeDone done) {
  done("this latchd was built without libraft");
}
void AddMember(ServerState&, std::uint64_t, const std::string&, const std::string&, int,
               RaftChangeDone done) {
  done("this latchd was built without libraft");
}
void RemoveMember(ServerState&, std::uint64_t, RaftChangeDone done) {
  done("this latchd was built without libraft");
}

}  // namespace latch::cluster
