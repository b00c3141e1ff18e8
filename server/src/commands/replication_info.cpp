#include "commands/replication_info.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cluster_node.h"
#include "commands/context.h"
#include "latch/protocol/info_line.h"
#include "server_state.h"

namespace latch {
namespace {

using protocol::AppendInfoLine;

// The replicas a master reports: the followers the leader heard from within an election
// timeout (Redis lists connected replicas only). None on a single node.
std::vector<const cluster::ClusterView::Member*> OnlineReplicas(const cluster::ClusterView& v) {
  std::vector<const cluster::ClusterView::Member*> out;
  if (!v.serving) return out;
  for (const auto& m : v.members) {
    if (!m.self && m.online) out.push_back(&m);
  }
  return out;
}

// Redis 7.0's master lines, with the Raft applied index as the replication offset.
void AppendMaster(const cluster::ClusterView& v, std::string* s) {
  AppendInfoLine(s, "role", "master");
  const auto replicas = OnlineReplicas(v);
  AppendInfoLine(s, "connected_slaves", static_cast<std::int64_t>(replicas.size()));
  for (std::size_t i = 0; i < replicas.size(); ++i) {
    const auto& r = *replicas[i];
    AppendInfoLine(s, "slave" + std::to_string(i),
                   "ip=" + r.host + ",port=" + std::to_string(r.port) + ",state=online,offset=" +
                       std::to_string(r.offset) + ",lag=" + std::to_string(r.lag_s));
  }
  AppendInfoLine(s, "master_failover_state", "no-failover");
  AppendInfoLine(s, "master_repl_offset", static_cast<std::int64_t>(v.applied_index));
}

// Redis 7.0's replica lines. The link is "up" while this node hears from a leader (libraft
// forgets the leader after an election timeout of silence); master_host is "?" while it
// knows none, as ROLE says.
void AppendReplica(const cluster::ClusterView& v, std::string* s) {
  const cluster::ClusterView::Member* leader = v.leader();
  const auto offset = static_cast<std::int64_t>(v.applied_index);
  AppendInfoLine(s, "role", "slave");
  AppendInfoLine(s, "master_host", leader != nullptr ? leader->host : "?");
  AppendInfoLine(s, "master_port", leader != nullptr ? leader->port : 0);
  AppendInfoLine(s, "master_link_status", leader != nullptr ? "up" : "down");
  AppendInfoLine(s, "master_last_io_seconds_ago", leader != nullptr ? 0 : -1);
  AppendInfoLine(s, "master_sync_in_progress", 0);
  AppendInfoLine(s, "slave_read_repl_offset", offset);
  AppendInfoLine(s, "slave_repl_offset", offset);
  if (leader == nullptr) AppendInfoLine(s, "master_link_down_since_seconds", -1);
  AppendInfoLine(s, "slave_priority", 100);
  AppendInfoLine(s, "slave_read_only", 1);
  AppendInfoLine(s, "replica_announced", 1);
  AppendInfoLine(s, "connected_slaves", 0);
  AppendInfoLine(s, "master_failover_state", "no-failover");
  AppendInfoLine(s, "master_repl_offset", offset);
}

}  // namespace

void AppendReplicationInfo(const ServerState& st, std::string* out) {
  cluster::ClusterView view;
  if (!cluster::View(st, &view)) {
    view.serving = true;  // a single node: a master without replicas
  }
  if (view.serving) {
    AppendMaster(view, out);
  } else {
    AppendReplica(view, out);
  }
}

// ROLE: a single latchd is a master with offset 0 and no replicas (what a stand-alone Redis
// answers; Sentinel-aware clients ask it). A cluster node answers as a Redis master or replica
// would: the leader lists the followers it hears from, a follower names the leader
// ("connected"; "?" and "connect" while it knows none). Offsets are Raft's applied index (the
// leader's match index for each follower).
void RoleCommand(CommandContext& ctx) {
  cluster::ClusterView view;
  if (!cluster::View(ctx.server, &view)) view.serving = true;
  if (view.serving) {
    const auto replicas = OnlineReplicas(view);
    ctx.out.ArrayHeader(3);
    ctx.out.Bulk("master");
    ctx.out.Integer(static_cast<std::int64_t>(view.applied_index));
    ctx.out.ArrayHeader(replicas.size());
    for (const auto* r : replicas) {
      ctx.out.ArrayHeader(3);
      ctx.out.Bulk(r->host);
      ctx.out.Bulk(std::to_string(r->port));
      ctx.out.Bulk(std::to_string(r->offset));
    }
    return;
  }
  const cluster::ClusterView::Member* leader = view.leader();
  ctx.out.ArrayHeader(5);
  ctx.out.Bulk("slave");
  ctx.out.Bulk(leader != nullptr ? leader->host : "?");
  ctx.out.Integer(leader != nullptr ? leader->port : 0);
  ctx.out.Bulk(leader != nullptr ? "connected" : "connect");
  ctx.out.Integer(static_cast<std::int64_t>(view.applied_index));
}

}  // namespace latch
