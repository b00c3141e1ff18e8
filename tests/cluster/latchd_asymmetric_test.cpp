// Issue 23's partition, one direction at a time (docs/CLUSTER.md, "Partition"): the leader's
// Raft link cut with TEST.FAULT RAFT-DROP IN ALL (it sends and hears nothing: its heartbeats
// keep the followers from electing until it steps down) or RAFT-DROP OUT ALL (it hears and
// sends nothing: the followers elect, and it learns the new term from the new leader's
// messages, then follows a leader that never hears from it). Either way, past its lease the
// old leader answers nothing from its own keyspace: it refuses, or, once it follows the new
// leader, relays there, so a read gets what the new leader acknowledged. The new leader holds
// the lock acknowledged before the cut until its TTL; after RAFT-HEAL the old leader catches
// up, and no acknowledged write is lost.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cluster/latchd_cluster.h"
#include "cluster/raft_probe.h"
#include "support/eventually.h"
#include "support/raw_connection.h"

namespace latch::test {
namespace {

using std::chrono::milliseconds;
using AsymClock = std::chrono::steady_clock;

constexpr milliseconds kAsymElection{300};
// The lease (0.8 x the election timeout from the start of the last committed round trip,
// cluster/raft_loop.cpp) plus slack for the time from that start to the cut and for a loaded
// machine, as in latchd_partition_test.cpp.
constexpr milliseconds kAsymRefuseAfter = kAsymElection * 4 / 5 + milliseconds(200);
// Long past the old leader's step-down (about two election timeouts without a majority), so
// that the lock never expires on it while it still leads (a write it could not commit).
constexpr milliseconds kAsymLockTtl{4000};

// The cut-off node may refuse (no reply, an error) or give the cluster's answer through the
// leader it follows; `expected` is that answer.
void ExpectRefusedOr(const std::optional<std::string>& reply, const std::string& expected,
                     const std::string& what) {
  if (!reply || reply->starts_with("-")) return;
  EXPECT_EQ(*reply, expected) << what;
}

void RunAsymmetric(const std::string& direction) {
  Cluster c({"--enable-test-commands", "yes", "--raft-election-timeout",
             std::to_string(kAsymElection.count()), "--raft-heartbeat-interval", "50"});
  std::string error;
  ASSERT_TRUE(c.Start(&error)) << error;
  const int old_leader = c.WaitLeader();
  ASSERT_NE(old_leader, -1) << c.Logs();
  const int old_port = c.port(old_leader);
  ASSERT_EQ(Cmd(old_port, {"SET", "k", "v-old"}), "+OK\r\n");
  const auto lock_sent = AsymClock::now();
  ASSERT_EQ(
      Cmd(old_port, {"SET", "lock:a", "holder", "NX", "PX", std::to_string(kAsymLockTtl.count())}),
      "+OK\r\n");
  ASSERT_EQ(Cmd(old_port, {"TEST.FAULT", "RAFT-DROP", direction, "ALL"}), "+OK\r\n");
  const auto cut = AsymClock::now();

  // Past the lease, before anything new is written: the lock is never granted, the key reads
  // as acknowledged or not at all.
  std::this_thread::sleep_until(cut + kAsymRefuseAfter);
  ExpectRefusedOr(Probe(old_port, {"GET", "k"}), Bulk("v-old"), "GET k, before");
  ExpectRefusedOr(Probe(old_port, {"SET", "lock:a", "old", "NX", "PX", "60000"}), "$-1\r\n",
                  "SET NX of the held lock on the cut-off node");

  // The others elect one of them, which takes a write and holds the lock.
  int leader = -1;
  ASSERT_TRUE(Eventually([&] { return (leader = c.Leader(old_leader)) != -1; }, kElection))
      << "no leader among the others\n"
      << c.Logs();
  const auto elected = AsymClock::now() - cut;
  ASSERT_NE(leader, old_leader);
  const int port = c.port(leader);
  const std::string term = RaftStatus(port).at("raft_term");
  ASSERT_EQ(Cmd(port, {"SET", "k", "v-new"}), "+OK\r\n");
  const std::string held = Cmd(port, {"SET", "lock:a", "other", "NX", "PX", "60000"});
  if (AsymClock::now() < lock_sent + kAsymLockTtl) {
    EXPECT_EQ(held, "$-1\r\n") << "the new leader granted the acknowledged lock within its TTL";
  }
  EXPECT_TRUE(Eventually(
      [&] {
        const RaftFields f = RaftStatus(old_port);
        return f.contains("raft_role") && f.at("raft_role") != "leader";
      },
      milliseconds(5000)))
      << "the cut-off leader still reports itself leader";
  const auto stepped_down = AsymClock::now() - cut;
  for (int round = 0; round < 3; ++round) {
    ExpectRefusedOr(Probe(old_port, {"GET", "k"}), Bulk("v-new"),
                    "GET k after the new leader's write, round " + std::to_string(round));
    ExpectRefusedOr(Probe(old_port, {"SET", "lock:a", "old", "NX", "PX", "60000"}), "$-1\r\n",
                    "SET NX of the held lock, round " + std::to_string(round));
  }

  // The lock is granted again once its TTL has passed since the client sent the SET.
  std::string reply;
  ASSERT_TRUE(Eventually(
      [&] {
        reply = Cmd(port, {"SET", "lock:a", "other", "NX", "PX", "60000"});
        return reply == "+OK\r\n";
      },
      kAsymLockTtl + milliseconds(5000)))
      << "the lock never expired on the new leader: " << reply;
  EXPECT_GE(AsymClock::now() - lock_sent, kAsymLockTtl);

  // Healed: the old leader follows the new one and applies up to its commit index, with no
  // election. With pre-vote (cluster/raft_loop.cpp) the node that heard nothing never raised
  // its term; without it (mutation check) its raised term deposes the new leader on the heal.
  ASSERT_EQ(Cmd(old_port, {"TEST.FAULT", "RAFT-HEAL"}), "+OK\r\n");
  const auto healed = AsymClock::now();
  const std::uint64_t commit = RaftNumber(RaftStatus(port), "raft_commit_index");
  const bool caught_up = Eventually(
      [&] {
        const RaftFields f = RaftStatus(old_port);
        return f.contains("raft_role") && f.at("raft_role") == "follower" &&
               f.at("raft_leader_id") == std::to_string(leader + 1) &&
               RaftNumber(f, "raft_applied_index") >= commit;
      },
      milliseconds(10000));
  ASSERT_TRUE(caught_up) << "the old leader did not catch up to index " << commit << "\n"
                         << c.Logs();
  const auto caught_up_after = AsymClock::now() - healed;
  EXPECT_EQ(Cmd(old_port, {"GET", "k"}), Bulk("v-new"));
  const RaftFields after = RaftStatus(port);
  EXPECT_EQ(after.at("raft_role"), "leader") << "the healed node deposed the new leader";
  EXPECT_EQ(after.at("raft_term"), term) << "the heal started an election";
  EXPECT_EQ(Cmd(port, {"GET", "lock:a"}), Bulk("other"));
  EXPECT_TRUE(c.alive(old_leader));
  const auto ms = [](auto d) {
    return static_cast<long long>(std::chrono::duration_cast<milliseconds>(d).count());
  };
  std::printf(
      "RAFT-DROP %s of the leader: new leader %lld ms after the cut, old leader not leading by "
      "%lld ms, caught up %lld ms after the heal\n",
      direction.c_str(), ms(elected), ms(stepped_down), ms(caught_up_after));
}

TEST(LatchdAsymmetricLink, LeaderThatHearsNothingStopsWithinItsLeaseAndTheOthersGoOn) {
  RunAsymmetric("IN");
}

TEST(LatchdAsymmetricLink, LeaderWhoseMessagesAreLostStopsWithinItsLeaseAndTheOthersGoOn) {
  RunAsymmetric("OUT");
}

// The direction's forms and errors.
TEST(LatchdAsymmetricLink, RaftDropDirectionChecksItsArguments) {
  Cluster c({"--enable-test-commands", "yes"});
  std::string error;
  ASSERT_TRUE(c.Start(&error)) << error;
  const int port = c.port(0);
  EXPECT_EQ(Cmd(port, {"TEST.FAULT", "RAFT-DROP", "IN"}), "-ERR syntax error\r\n");
  EXPECT_EQ(Cmd(port, {"TEST.FAULT", "RAFT-DROP", "out"}), "-ERR syntax error\r\n");
  EXPECT_EQ(Cmd(port, {"TEST.FAULT", "RAFT-DROP", "IN", "7"}), "-ERR Unknown node 7\r\n");
  EXPECT_EQ(Cmd(port, {"TEST.FAULT", "RAFT-DROP", "OUT", "x"}),
            "-ERR value is not an integer or out of range\r\n");
  EXPECT_EQ(Cmd(port, {"TEST.FAULT", "RAFT-DROP", "IN", "OUT", "2"}),
            "-ERR value is not an integer or out of range\r\n");
  EXPECT_EQ(Cmd(port, {"TEST.FAULT", "RAFT-DROP", "in", "2", "3"}), "+OK\r\n");
  EXPECT_EQ(Cmd(port, {"TEST.FAULT", "RAFT-DROP", "OUT", "all"}), "+OK\r\n");
  EXPECT_EQ(Cmd(port, {"TEST.FAULT", "RAFT-HEAL"}), "+OK\r\n");
}

}  // namespace
}  // namespace latch::test
