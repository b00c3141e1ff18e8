// BuildClusterView (cluster/cluster_discovery.h): what ROLE, INFO replication and SENTINEL
// say about the cluster, from a node's Raft state, without processes.
#include <gtest/gtest.h>

#include <chrono>
#include <vector>

#include "cluster/cluster_discovery.h"

namespace latch::cluster {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

RaftConfig ThreeNodes(std::uint64_t self) {
  RaftConfig c;
  c.id = self;
  c.election_timeout_ms = 1000;
  for (std::uint64_t id = 1; id <= 3; ++id) {
    c.members.push_back({id, "127.0.0.1:700" + std::to_string(id), "10.0.0." + std::to_string(id),
                         6380 + static_cast<int>(id)});
  }
  return c;
}

NodeStatus Status(NodeStatus::Role role, std::uint64_t leader, bool ready) {
  NodeStatus st;
  st.role = role;
  st.term = 7;
  st.leader_id = leader;
  st.leader_ready = ready;
  st.applied_index = 42;
  return st;
}

TEST(ClusterView, ServingLeaderReportsFollowersHeardWithinAnElectionTimeout) {
  const auto now = Clock::now();
  const std::vector<PeerProgress> peers{{2, 40, now - milliseconds(2500)}, {3, 41, now}};
  const ClusterView v =
      BuildClusterView(ThreeNodes(1), Status(NodeStatus::Role::kLeader, 1, true), peers, true, now);
  EXPECT_TRUE(v.serving);
  EXPECT_TRUE(v.leader_known);
  ASSERT_NE(v.leader(), nullptr);
  EXPECT_EQ(v.leader()->id, 1u);
  EXPECT_EQ(v.leader()->host, "10.0.0.1");
  EXPECT_EQ(v.leader()->port, 6381);
  ASSERT_EQ(v.members.size(), 3u);
  EXPECT_TRUE(v.members[0].self);
  EXPECT_EQ(v.members[0].offset, 42u);
  EXPECT_FALSE(v.members[1].online);  // last heard 2.5 s ago
  EXPECT_EQ(v.members[1].offset, 40u);
  EXPECT_EQ(v.members[1].lag_s, 2);
  EXPECT_TRUE(v.members[2].online);
  EXPECT_EQ(v.members[2].offset, 41u);
  EXPECT_EQ(v.members[2].lag_s, 0);
  EXPECT_EQ(v.term, 7u);
  EXPECT_EQ(v.election_timeout_ms, 1000);
}

TEST(ClusterView, FollowerNamesTheLeaderItHearsFrom) {
  const ClusterView v = BuildClusterView(
      ThreeNodes(2), Status(NodeStatus::Role::kFollower, 3, false), {}, false, Clock::now());
  EXPECT_FALSE(v.serving);
  EXPECT_TRUE(v.leader_known);
  ASSERT_NE(v.leader(), nullptr);
  EXPECT_EQ(v.leader()->id, 3u);
  EXPECT_TRUE(v.members[1].self);
  for (const auto& m : v.members) EXPECT_TRUE(m.online) << m.id;
}

TEST(ClusterView, NoLeaderWhileNoneIsHeardOrTheElectedOneDoesNotServeYet) {
  const auto now = Clock::now();
  ClusterView v = BuildClusterView(ThreeNodes(2), Status(NodeStatus::Role::kCandidate, 0, false),
                                   {}, false, now);
  EXPECT_FALSE(v.leader_known);
  EXPECT_EQ(v.leader(), nullptr);
  EXPECT_FALSE(v.members[0].online);
  EXPECT_TRUE(v.members[1].online);  // itself
  // Elected, its election barrier not applied yet: clients would only be refused.
  v = BuildClusterView(ThreeNodes(2), Status(NodeStatus::Role::kLeader, 2, false), {}, false, now);
  EXPECT_FALSE(v.serving);
  EXPECT_FALSE(v.leader_known);
  // Ready in Raft, but the log has not taken it up yet (ClusterLog polls every 10 ms).
  v = BuildClusterView(ThreeNodes(2), Status(NodeStatus::Role::kLeader, 2, true), {}, false, now);
  EXPECT_FALSE(v.leader_known);
  v = BuildClusterView(ThreeNodes(2), Status(NodeStatus::Role::kLeader, 2, true), {}, true, now);
  EXPECT_TRUE(v.serving);
  EXPECT_TRUE(v.leader_known);
  EXPECT_FALSE(v.members[0].online);  // never heard from in this term
}

}  // namespace
}  // namespace latch::cluster
