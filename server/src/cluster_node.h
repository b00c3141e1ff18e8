#pragma once
// The server's few entry points into a cluster node (cluster/cluster_log.h), kept in one light
// header: the wiring of the node from the server's state (the state layer; cluster/ itself
// gets only the parts it uses, ClusterParts). Built from cluster_node.cpp when latch_cluster
// (libraft) is, else from cluster_node_none.cpp, where raft-peers stops start-up.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cluster/cluster_log_view.h"
#include "cluster/raft_report.h"

namespace latch {
struct ServerState;
}  // namespace latch

namespace latch::cluster {

// With raft-peers set: starts the Raft node and attaches its log to the key events, before
// any worker runs. Throws std::runtime_error when it cannot (bad raft-* options, libraft
// refusing the directory or the port, latchd built without libraft). Nothing without.
void StartNode(ServerState& s);
// After the workers stopped and before their io_contexts go: held replies end as lost.
void StopNode(ServerState& s);
// What clients are told about the cluster (ROLE, INFO replication, SENTINEL:
// cluster_discovery.h); false on a single node.
bool View(const ServerState& s, ClusterView* out);
// Whether a cluster node knows a leader to send writes to: another node it hears from, or
// itself while it serves. While it knows none, commands that touch data get -TRYAGAIN
// (commands/command_table.cpp). True on a single node.
bool LeaderKnown(const ServerState& s);
// The leader a follower relays its clients' sessions to (net/connection_relay.cpp;
// docs/CLUSTER.md, "Forwarding"): its Raft id and its client address (replicated in the log,
// or raft-peers for a founding member: cluster/member_table.h).
struct LeaderEndpoint {
  std::uint64_t id = 0;
  std::string host;
  int port = 0;
  int rest_port = 0;  // its REST endpoint on `host` (0: not known yet, or it serves none)
};
// True, with the leader in *out, when this node is a cluster node that hears from a leader
// other than itself. False on the leader, while no leader is known, and on a single node.
bool FollowedLeader(const ServerState& s, LeaderEndpoint* out);
// FollowedLeader's id alone (0 when it would be false): cheap enough for a periodic check.
std::uint64_t FollowedLeaderId(const ServerState& s);
// True when the node stopped itself on a fault (before StopNode): its process must exit
// with a failure status. False on a single node.
bool Failed(const ServerState& s);

// RAFT STATUS and /metrics (commands/raft_commands.cpp, report/metrics_text.cpp): false on a
// single node.
bool Report(const ServerState& s, RaftReport* out);
// TEST.FAULT RAFT-DROP and RAFT-HEAL (commands/test_commands.cpp, test mode only; the command
// checks the ids against Report's members): every Raft message to or from `peers` (every peer
// when `all`) is dropped until healed (cluster/raft_link_fault.h); `in`/`out` say which
// directions (both for a partition). False on a single node.
bool DropRaftLinks(ServerState& s, bool all, std::vector<std::uint64_t> peers, bool in, bool out);
bool HealRaftLinks(ServerState& s);
// RAFT TRANSFER, ADD, REMOVE on the leader (the command checks ids and leadership first).
// `done` runs once, on another thread, with "" or why it failed. `keep_client`: the client
// waiting for the answer, not closed when this node steps down (ClusterLog::HandOver).
using RaftChangeDone = std::function<void(const std::string& error)>;
void Transfer(ServerState& s, std::uint64_t id, std::int64_t keep_client, RaftChangeDone done);
// `raft_address`: "IPv4:port", as libraft takes it; the client address is replicated to every
// node before the member is added (cluster/member_table.h).
void AddMember(ServerState& s, std::uint64_t id, const std::string& raft_address,
               const std::string& client_host, int client_port, RaftChangeDone done);
void RemoveMember(ServerState& s, std::uint64_t id, RaftChangeDone done);

}  // namespace latch::cluster
