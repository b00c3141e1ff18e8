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

// The view with the founding members only (raft-peers; no configuration read yet).
ClusterView ViewOf(const RaftConfig& c, const NodeStatus& st,
                   const std::vector<PeerProgress>& peers, bool serving, Clock::time_point now) {
  return BuildClusterView(c, JoinMembers(c, {}, {}), st, peers, serving, now);
}

TEST(ClusterView, ServingLeaderReportsFollowersHeardWithinAnElectionTimeout) {
  const auto now = Clock::now();
  const std::vector<PeerProgress> peers{{2, 40, now - milliseconds(2500)}, {3, 41, now}};
  const ClusterView v =
      ViewOf(ThreeNodes(1), Status(NodeStatus::Role::kLeader, 1, true), peers, true, now);
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
  const ClusterView v =
      ViewOf(ThreeNodes(2), Status(NodeStatus::Role::kFollower, 3, false), {}, false, Clock::now());
  EXPECT_FALSE(v.serving);
  EXPECT_TRUE(v.leader_known);
  ASSERT_NE(v.leader(), nullptr);
  EXPECT_EQ(v.leader()->id, 3u);
  EXPECT_TRUE(v.members[1].self);
  for (const auto& m : v.members) EXPECT_TRUE(m.online) << m.id;
}

TEST(ClusterView, NoLeaderWhileNoneIsHeardOrTheElectedOneDoesNotServeYet) {
  const auto now = Clock::now();
  ClusterView v =
      ViewOf(ThreeNodes(2), Status(NodeStatus::Role::kCandidate, 0, false), {}, false, now);
  EXPECT_FALSE(v.leader_known);
  EXPECT_EQ(v.leader(), nullptr);
  EXPECT_FALSE(v.members[0].online);
  EXPECT_TRUE(v.members[1].online);  // itself
  // Elected, its election barrier not applied yet: clients would only be refused.
  v = ViewOf(ThreeNodes(2), Status(NodeStatus::Role::kLeader, 2, false), {}, false, now);
  EXPECT_FALSE(v.serving);
  EXPECT_FALSE(v.leader_known);
  // Ready in Raft, but the log has not taken it up yet (ClusterLog polls every 10 ms).
  v = ViewOf(ThreeNodes(2), Status(NodeStatus::Role::kLeader, 2, true), {}, false, now);
  EXPECT_FALSE(v.leader_known);
  v = ViewOf(ThreeNodes(2), Status(NodeStatus::Role::kLeader, 2, true), {}, true, now);
  EXPECT_TRUE(v.serving);
  EXPECT_TRUE(v.leader_known);
  EXPECT_FALSE(v.members[0].online);  // never heard from in this term
}

// A member added at run time is told of with the address its member entry carries; a
// founding member with its raft-peers address; a removed founding member not at all.
TEST(ClusterView, MembersComeFromTheConfigurationJoinedWithTheTable) {
  const RaftConfig c = ThreeNodes(1);
  const std::vector<RaftMember> current{{1, "127.0.0.1:7001", RaftMember::Role::kVoter},
                                        {3, "127.0.0.1:7003", RaftMember::Role::kVoter},
                                        {4, "127.0.0.1:7004", RaftMember::Role::kVoter},
                                        {5, "127.0.0.1:7005", RaftMember::Role::kSpare},
                                        {6, "127.0.0.1:7006", RaftMember::Role::kVoter}};
  MemberTable::Map table;
  std::string error;
  ASSERT_TRUE(
      ParseMemberLines("set 4 10.0.0.4 6384\nset 5 10.0.0.5 6385\nset 3 h3 7\n", &table, &error))
      << error;
  const std::vector<KnownMember> known = JoinMembers(c, current, table);
  ASSERT_EQ(known.size(), 3u);  // 2 was removed, 5 is a spare, 6 has no address yet
  EXPECT_EQ(known[0].id, 1u);
  EXPECT_EQ(known[0].client, (ClientAddress{"10.0.0.1", 6381}));
  EXPECT_EQ(known[1].client, (ClientAddress{"h3", 7}));  // the table wins over raft-peers
  EXPECT_EQ(known[2].id, 4u);
  EXPECT_EQ(known[2].client, (ClientAddress{"10.0.0.4", 6384}));
  const ClusterView v = BuildClusterView(c, known, Status(NodeStatus::Role::kFollower, 4, false),
                                         {}, false, Clock::now());
  ASSERT_NE(v.leader(), nullptr);
  EXPECT_EQ(v.leader()->host, "10.0.0.4");
  EXPECT_EQ(v.leader()->port, 6384);
}

TEST(ClusterView, MemberEntriesAndSectionsRoundTrip) {
  MemberTable t;
  std::string_view lines;
  std::string error;
  const std::string set = EncodeMemberSet(4, {"10.0.0.4", 6384});
  ASSERT_EQ(set.substr(0, 8), std::string(8, '\0'));
  ASSERT_TRUE(MemberEntryLines(std::string_view(set).substr(8), &lines));
  ASSERT_TRUE(t.ApplyLines(lines, &error)) << error;
  const std::string forget = EncodeMemberForget(4);
  ASSERT_TRUE(MemberEntryLines(std::string_view(forget).substr(8), &lines));
  MemberTable::Map before = t.Copy();
  EXPECT_EQ(before.size(), 1u);
  ASSERT_TRUE(t.ApplyLines(lines, &error)) << error;
  EXPECT_TRUE(t.Copy().empty());
  // A section is the table's lines; unknown changes are skipped, malformed known ones refused
  // with the table unchanged.
  MemberTable::Map back;
  ASSERT_TRUE(ParseMemberLines(EncodeMemberSection(before) + "rest 4 8080\n", &back, &error));
  EXPECT_EQ(back, before);
  t.Replace(before);
  EXPECT_FALSE(t.ApplyLines("set 5 host\n", &error));
  EXPECT_EQ(t.Copy(), before);
  EXPECT_FALSE(MemberEntryLines("not a member entry", &lines));
  // The REST port a leader records (followers relay REST requests there) is optional.
  MemberTable::Map rest;
  ASSERT_TRUE(ParseMemberLines("set 2 h 6380 8080\n", &rest, &error)) << error;
  EXPECT_EQ(rest.at(2), (ClientAddress{"h", 6380, 8080}));
  EXPECT_EQ(EncodeMemberSection(rest), "set 2 h 6380 8080\n");
  EXPECT_FALSE(ParseMemberLines("set 2 h 6380 port\n", &rest, &error));
}

}  // namespace
}  // namespace latch::cluster
