#pragma once
// ROLE and INFO's Replication section. A single latchd is a master with no replicas; a
// cluster node answers as a Redis master (the leader, with its followers as replicas) or a
// replica of the leader would (docs/CLUSTER.md, "ROLE / INFO replication"), from the same
// cluster::ClusterView as SENTINEL, so the three agree.
#include <string>

namespace latch {

struct CommandContext;
struct ServerState;

// Appends the section's lines (without its "# Replication" header).
void AppendReplicationInfo(const ServerState& st, std::string* out);
void RoleCommand(CommandContext& ctx);

}  // namespace latch
