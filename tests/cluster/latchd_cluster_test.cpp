// Three latchd processes on loopback as one Raft cluster (raft-peers; docs/CLUSTER.md): a
// leader is elected, a lock taken on it is on both followers once acknowledged, followers
// refuse writes, and after kill -9 of the leader the new leader still holds the lock until
// its TTL ran out. Ports are picked at run time; every wait is a condition with a deadline.
#include "cluster/latchd_cluster.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <string>
#include <vector>

namespace latch::test {
namespace {

using std::chrono::milliseconds;
using SteadyClock = std::chrono::steady_clock;

TEST(LatchdCluster, ElectsALeaderAndReplicatesALockToBothFollowers) {
  Cluster c;
  std::string error;
  ASSERT_TRUE(c.Start(&error)) << error;
  const int leader = c.WaitLeader();
  ASSERT_NE(leader, -1) << "no leader within " << kElection.count() << " ms\n" << c.Logs();

  EXPECT_EQ(Cmd(c.port(leader), {"SET", "lock:a", "owner-1", "NX", "PX", "30000"}), "+OK\r\n");
  for (int i = 0; i < Cluster::kNodes; ++i) {
    if (i == leader) continue;
    EXPECT_TRUE(Eventually([&] {
      return Cmd(c.port(i), {"GET", "lock:a"}) == Bulk("owner-1");
    })) << "node "
        << i + 1 << ": " << Cmd(c.port(i), {"GET", "lock:a"});
    // The follower's TTL runs from when it applied the entry, plus the clock-rate margin.
    const std::int64_t pttl = IntegerOf(Cmd(c.port(i), {"PTTL", "lock:a"}));
    EXPECT_GT(pttl, 25000) << "node " << i + 1;
    EXPECT_LE(pttl, 30030) << "node " << i + 1;
    // Followers refuse writes as a Redis read-only replica does.
    EXPECT_EQ(Cmd(c.port(i), {"SET", "lock:b", "x", "NX", "PX", "1000"}),
              "-READONLY You can't write against a read only replica.\r\n");
    EXPECT_EQ(Cmd(c.port(i), {"DEL", "lock:a"}),
              "-READONLY You can't write against a read only replica.\r\n");
  }
  EXPECT_EQ(Cmd(c.port(leader), {"SET", "lock:a", "owner-2", "NX", "PX", "30000"}), "$-1\r\n");
  EXPECT_EQ(Cmd(c.port(leader), {"GET", "lock:b"}), "$-1\r\n");
}

TEST(LatchdCluster, NewLeaderAfterKillNineHoldsTheAcknowledgedLockUntilItsTtl) {
  Cluster c;
  std::string error;
  ASSERT_TRUE(c.Start(&error)) << error;
  const int old_leader = c.WaitLeader();
  ASSERT_NE(old_leader, -1) << "no leader within " << kElection.count() << " ms\n" << c.Logs();

  constexpr std::int64_t kTtlMs = 8000;
  const auto sent = SteadyClock::now();
  ASSERT_EQ(
      Cmd(c.port(old_leader), {"SET", "lock:k", "owner-1", "NX", "PX", std::to_string(kTtlMs)}),
      "+OK\r\n");
  c.Kill9(old_leader);  // at once: the followers may not have applied the entry yet

  const int leader = c.WaitLeader();
  ASSERT_NE(leader, -1) << "no new leader within " << kElection.count() << " ms\n" << c.Logs();
  ASSERT_NE(leader, old_leader);
  // Every acknowledged write is in the new leader's log, applied before it serves.
  EXPECT_EQ(Cmd(c.port(leader), {"GET", "lock:k"}), Bulk("owner-1"));
  std::string reply;
  bool granted = false;
  // Polled until the grant (bounded): never before the old leader's own deadline.
  Eventually(
      [&] {
        reply = Cmd(c.port(leader), {"SET", "lock:k", "owner-2", "NX", "PX", "5000"});
        granted = reply == "+OK\r\n";
        if (!granted) {
          EXPECT_EQ(reply, "$-1\r\n");
        }
        return granted;
      },
      milliseconds(kTtlMs + 10000));
  const auto freed_after = std::chrono::duration_cast<milliseconds>(SteadyClock::now() - sent);
  ASSERT_TRUE(granted) << reply << "\n" << c.Logs();
  EXPECT_GE(freed_after.count(), kTtlMs) << "the new leader freed the lock before its TTL ran out";
  // The grant replicated to the remaining follower.
  for (int i = 0; i < Cluster::kNodes; ++i) {
    if (i == leader || !c.alive(i)) continue;
    EXPECT_TRUE(Eventually([&] {
      return Cmd(c.port(i), {"GET", "lock:k"}) == Bulk("owner-2");
    })) << Cmd(c.port(i), {"GET", "lock:k"});
  }
}

// A leader cut off from its followers while a write is in flight: the write cannot commit,
// so the client's connection is closed without a reply (its outcome is unknown), and the old
// leader, whose keyspace holds the write, stops instead of serving it (docs/CLUSTER.md, "dirty
// leader"). The others elect a leader and agree on the write's fate.
TEST(LatchdCluster, LeaderLosingItsMajorityMidWriteClosesTheClientAndStops) {
  Cluster c;
  std::string error;
  ASSERT_TRUE(c.Start(&error)) << error;
  const int old_leader = c.WaitLeader();
  ASSERT_NE(old_leader, -1) << "no leader within " << kElection.count() << " ms\n" << c.Logs();
  std::vector<int> followers;
  for (int i = 0; i < Cluster::kNodes; ++i) {
    if (i != old_leader) followers.push_back(i);
  }
  for (int i : followers) c.Signal(i, SIGSTOP);
  RawConnection conn(c.port(old_leader), milliseconds(15000));
  ASSERT_TRUE(conn.Connect(c.port(old_leader)));
  ASSERT_TRUE(conn.Send(RawConnection::Encode({"SET", "lock:cut", "x", "NX", "PX", "30000"})));
  std::string trailing;
  EXPECT_TRUE(conn.WaitClosed(&trailing)) << c.Log(old_leader);
  EXPECT_EQ(trailing, "");
  const std::string log = c.Log(old_leader);
  EXPECT_NE(c.WaitExit(old_leader), -1) << "the old leader did not stop\n" << log;
  EXPECT_NE(log.find("lost leadership with writes not committed"), std::string::npos) << log;
  for (int i : followers) c.Signal(i, SIGCONT);
  const int leader = c.WaitLeader();
  ASSERT_NE(leader, -1) << "no new leader within " << kElection.count() << " ms\n" << c.Logs();
  // The write may still commit (the followers can have received it before they stopped, and
  // a new leader commits what it holds): the outcome is unknown to the client, but the two
  // live nodes agree on it.
  const std::string value = Cmd(c.port(leader), {"GET", "lock:cut"});
  EXPECT_TRUE(value == "$-1\r\n" || value == Bulk("x")) << value;
  for (int i : followers) {
    if (i == leader) continue;
    EXPECT_TRUE(Eventually([&] {
      return Cmd(c.port(i), {"GET", "lock:cut"}) == value;
    })) << Cmd(c.port(i), {"GET", "lock:cut"})
        << " vs the leader's " << value;
  }
}

// Each bad configuration stops start-up with its reason; nothing serves.
void ExpectRefused(const std::vector<std::string>& args, const std::string& reason) {
  LatchdProcess latchd(args);
  EXPECT_FALSE(latchd.ok());
  EXPECT_NE(latchd.error().find(reason), std::string::npos) << latchd.error();
}

TEST(LatchdCluster, BadRaftConfigurationStopsStartUp) {
  const std::string r1 = std::to_string(FreePort()), r2 = std::to_string(FreePort());
  const std::string c1 = std::to_string(FreePort()), c2 = std::to_string(FreePort());
  ExpectRefused(
      {"--raft-id", "1", "--raft-peers", "1=127.0.0.1:" + r1},
      "bad raft-peers member '1=127.0.0.1:" + r1 + "': expected ID=HOST:RAFTPORT:CLIENTPORT");
  ExpectRefused({"--raft-id", "1", "--raft-peers", "x=127.0.0.1:" + r1 + ":" + c1},
                "(ID: a positive integer)");
  ExpectRefused({"--raft-id", "1", "--raft-peers",
                 "1=127.0.0.1:" + r1 + ":" + c1 + " 1=127.0.0.1:" + r2 + ":" + c2},
                "duplicate raft-peers id 1");
  ExpectRefused({"--raft-id", "1", "--raft-peers",
                 "1=127.0.0.1:" + r1 + ":" + c1 + " 2=127.0.0.1:" + r1 + ":" + c2},
                "duplicate raft-peers address 127.0.0.1:" + r1);
  ExpectRefused({"--raft-id", "1", "--raft-peers",
                 "1=127.0.0.1:" + r1 + ":" + c1 + " 2=localhost:" + r1 + ":" + c2},
                "duplicate raft-peers address 127.0.0.1:" + r1 + " (after resolving localhost)");
  ExpectRefused({"--raft-id", "3", "--raft-peers",
                 "1=127.0.0.1:" + r1 + ":" + c1 + " 2=127.0.0.1:" + r2 + ":" + c2},
                "this node (raft-id 3) is not in raft-peers");
  ExpectRefused({"--raft-peers", "1=127.0.0.1:" + r1 + ":" + c1},
                "raft-peers is set but raft-id is not");
}

}  // namespace
}  // namespace latch::test
