#include "cluster/cluster_discovery.h"

#include <algorithm>

namespace latch::cluster {
namespace {

const PeerProgress* ProgressOf(const std::vector<PeerProgress>& peers, std::uint64_t id) {
  for (const PeerProgress& p : peers) {
    if (p.id == id) return &p;
  }
  return nullptr;
}

}  // namespace

ClusterView BuildClusterView(const RaftConfig& config, const std::vector<KnownMember>& members,
                             const NodeStatus& status, const std::vector<PeerProgress>& peers,
                             bool serving, std::chrono::steady_clock::time_point now) {
  ClusterView v;
  v.self_id = config.id;
  v.term = status.term;
  v.applied_index = status.applied_index;
  v.election_timeout_ms = config.election_timeout_ms;
  // A leader elected but not serving yet (its election barrier not applied) is not offered
  // to clients: they would only be refused.
  v.serving = serving && status.role == NodeStatus::Role::kLeader && status.leader_ready;
  const std::uint64_t leader_id =
      status.leader_id == config.id && !v.serving ? 0 : status.leader_id;
  const auto timeout = std::chrono::milliseconds(config.election_timeout_ms);
  for (const KnownMember& m : members) {
    ClusterView::Member out;
    out.id = m.id;
    out.host = m.client.host;
    out.port = m.client.port;
    out.self = m.id == config.id;
    out.leader = leader_id != 0 && m.id == leader_id;
    if (out.self) {
      out.online = true;
      out.offset = status.applied_index;
    } else if (v.serving) {
      // The leader knows its followers: online while heard from within an election timeout
      // (what libraft counts towards its own contact quorum).
      const PeerProgress* p = ProgressOf(peers, m.id);
      if (p != nullptr && p->last_heard != std::chrono::steady_clock::time_point{}) {
        const auto since = now - p->last_heard;
        out.online = since < timeout;
        out.lag_s = std::max<std::int64_t>(
            0, std::chrono::duration_cast<std::chrono::seconds>(since).count());
      }
      out.offset = p != nullptr ? p->match_index : 0;
    } else {
      // A follower hears from the leader only; the leader it knows is up, the others unknown.
      out.online = leader_id != 0;
    }
    v.leader_known = v.leader_known || out.leader;
    v.members.push_back(std::move(out));
  }
  return v;
}

}  // namespace latch::cluster
