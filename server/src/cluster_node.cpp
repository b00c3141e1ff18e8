#include "cluster_node.h"

#include <chrono>
#include <stdexcept>

#include "cluster/cluster_discovery.h"
#include "cluster/cluster_identity.h"
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
  // Before libraft opens (and writes to) the directory: another cluster's log stops start-up.
  if (auto refused = CheckClusterIdentity(config)) throw std::runtime_error(*refused);
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
  *out = BuildClusterView(log.config(), log.KnownMembers(), log.Status(), log.Peers(),
                          log.serving(), std::chrono::steady_clock::now());
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
  for (const KnownMember& m : s.cluster->KnownMembers()) {
    if (m.id != leader) continue;
    *out = LeaderEndpoint{m.id, m.client.host, m.client.port, m.client.rest_port};
    return true;
  }
  return false;  // its client address is not known yet (its member entry not applied here)
}

// ---- RAFT STATUS / TRANSFER / ADD / REMOVE and /metrics ----

namespace {

const char* ReportRoleName(NodeStatus::Role role) {
  switch (role) {
    case NodeStatus::Role::kLeader:
      return "leader";
    case NodeStatus::Role::kFollower:
      return "follower";
    case NodeStatus::Role::kCandidate:
      return "candidate";
    default:
      return "unavailable";
  }
}

const char* ReportMemberRoleName(RaftMember::Role role) {
  switch (role) {
    case RaftMember::Role::kStandby:
      return "standby";
    case RaftMember::Role::kSpare:
      return "spare";
    default:
      return "voter";
  }
}

}  // namespace

bool Report(const ServerState& s, RaftReport* out) {
  if (!s.cluster) return false;
  const ClusterLog& log = *s.cluster;
  const NodeStatus st = log.Status();
  const auto now = std::chrono::steady_clock::now();
  RaftReport r;
  r.id = log.config().id;
  r.role = ReportRoleName(st.role);
  r.term = st.term;
  r.leader_id = st.leader_id;
  r.leader_address = st.leader_address;
  r.serving = log.serving();
  r.commit_index = st.commit_index;
  r.applied_index = st.applied_index;
  r.last_index = st.last_index;
  r.snapshot_index = st.snapshot_index;
  r.leader_changes = st.leader_changes;
  const std::vector<PeerProgress> peers = log.Peers();  // empty unless this node leads
  for (const RaftMember& m : log.node().Members()) {
    RaftReport::Member out_m{m.id, m.address, ReportMemberRoleName(m.role), m.id == r.id};
    for (const PeerProgress& p : peers) {
      if (p.id != m.id) continue;
      out_m.has_progress = true;
      out_m.match_index = p.match_index;
      if (p.last_heard != std::chrono::steady_clock::time_point{}) {
        out_m.last_heard_ms =
            std::chrono::duration_cast<std::chrono::milliseconds>(now - p.last_heard).count();
      }
    }
    r.members.push_back(std::move(out_m));
  }
  *out = std::move(r);
  return true;
}

bool DropRaftLinks(ServerState& s, bool all, std::vector<std::uint64_t> peers, bool in, bool out) {
  if (!s.cluster) return false;
  if (all) {
    s.cluster->node().DropAllLinks(in, out);
  } else {
    s.cluster->node().DropLinks(std::move(peers), in, out);
  }
  return true;
}

bool HealRaftLinks(ServerState& s) {
  if (!s.cluster) return false;
  s.cluster->node().HealLinks();
  return true;
}

void Transfer(ServerState& s, std::uint64_t id, std::int64_t keep_client, RaftChangeDone done) {
  if (!s.cluster) return done("cluster support is disabled");
  s.cluster->HandOver(id, keep_client, std::move(done));
}

void AddMember(ServerState& s, std::uint64_t id, const std::string& raft_address,
               const std::string& client_host, int client_port, RaftChangeDone done) {
  if (!s.cluster) return done("cluster support is disabled");
  s.cluster->AddMember(id, raft_address, ClientAddress{client_host, client_port}, std::move(done));
}

void RemoveMember(ServerState& s, std::uint64_t id, RaftChangeDone done) {
  if (!s.cluster) return done("cluster support is disabled");
  s.cluster->RemoveMember(id, std::move(done));
}

}  // namespace latch::cluster
