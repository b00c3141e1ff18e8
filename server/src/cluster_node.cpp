#include "cluster_node.h"

#include <chrono>
#include <stdexcept>

#include "cluster/cluster_discovery.h"
#include "cluster/cluster_log.h"
#include "cluster/raft_config.h"
#include "server_state.h"

namespace latch::cluster {

void StartNode(ServerState& s) {
  RaftConfig config;
  {
    std::lock_guard lock(s.options_mu);
    if (s.options.raft_peers.empty()) return;
    if (auto refused = ResolveRaftConfig(s.options, &config)) throw std::runtime_error(*refused);
  }
  if (s.cluster) return;  // started before (a server started again after stop())
  ClusterParts parts{*s.log,
                     *s.clock,
                     s.dbs,
                     [&s](int db) -> store::Keyspace& { return s.Database(db); },
                     s.locks,
                     s.key_events,
                     s.clients,
                     s.raft_follower,
                     s.request_shutdown};
  s.cluster = std::make_shared<ClusterLog>(std::move(parts), std::move(config));
  s.cluster->Attach();
  s.reply_log = s.cluster.get();
}

void StopNode(ServerState& s) {
  if (s.cluster) s.cluster->Stop();
  s.reply_log = nullptr;
  s.cluster.reset();
}

bool Failed(const ServerState& s) { return s.cluster && s.cluster->failed(); }

bool View(const ServerState& s, ClusterView* out) {
  if (!s.cluster) return false;
  const ClusterLog& log = *s.cluster;
  *out = BuildClusterView(log.config(), log.Status(), log.Peers(), log.serving(),
                          std::chrono::steady_clock::now());
  return true;
}

bool LeaderKnown(const ServerState& s) {
  if (!s.cluster) return true;
  const NodeStatus st = s.cluster->Status();
  if (st.leader_id == 0) return false;
  return st.leader_id != s.cluster->config().id || s.cluster->serving();
}

std::uint64_t FollowedLeaderId(const ServerState& s) {
  if (!s.cluster) return 0;
  const std::uint64_t leader = s.cluster->Status().leader_id;
  return leader == s.cluster->config().id ? 0 : leader;
}

bool FollowedLeader(const ServerState& s, LeaderEndpoint* out) {
  const std::uint64_t leader = FollowedLeaderId(s);
  if (leader == 0) return false;
  for (const RaftConfig::Member& m : s.cluster->config().members) {
    if (m.id != leader) continue;
    *out = LeaderEndpoint{m.id, m.client_host, m.client_port};
    return true;
  }
  return false;  // a leader outside the configuration this node started with
}

}  // namespace latch::cluster
