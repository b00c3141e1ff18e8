#pragma once
// How a cluster node describes the cluster to clients (docs/CLUSTER.md, "Clients and leader
// discovery"): one ClusterView, from which ROLE, INFO replication and SENTINEL are answered, so
// that the three always agree. A pure function of the node's state: no libraft, no locks.
#include <chrono>
#include <vector>

#include "cluster/cluster_log_view.h"
#include "cluster/member_table.h"
#include "cluster/raft_config.h"
#include "cluster/raft_node.h"

namespace latch::cluster {

// `members`: who clients are told of, with their client addresses (JoinMembers, in
// member_table.h); `serving`: this node is the leader and accepts writes
// (ClusterLog::serving); `peers`: the leader's progress of its followers (RaftNode::Peers,
// empty elsewhere); `now` is when the state was read.
ClusterView BuildClusterView(const RaftConfig& config, const std::vector<KnownMember>& members,
                             const NodeStatus& status, const std::vector<PeerProgress>& peers,
                             bool serving, std::chrono::steady_clock::time_point now);

}  // namespace latch::cluster
