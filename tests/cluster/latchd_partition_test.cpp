// Issue 23's partition (docs/CLUSTER.md, "Partition"): the leader's Raft link is cut with
// TEST.FAULT RAFT-DROP ALL while its process keeps running and serving its clients. It must
// stop answering within its lease, the majority must elect a new leader that serves writes
// and holds the acknowledged lock until its TTL, and after RAFT-HEAL the old leader must
// rejoin as a follower and catch up, never having served stale data, with no acknowledged
// write lost. Three and five nodes, with the chaos test's short timeouts. A cut-off minority of
// followers, the other side of the same fault, is below (RunFollowerPartition).
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
using PartitionClock = std::chrono::steady_clock;

constexpr milliseconds kPartitionElection{300};
// The leader's lease: 0.8 x the election timeout from the start of its last committed round
// trip (cluster/raft_loop.cpp, LeaseSpan). The slack covers the time from that start to the
// cut, which the test counts from the cut instead, and a loaded machine's scheduling.
constexpr milliseconds kPartitionLease = kPartitionElection * 4 / 5;
constexpr milliseconds kPartitionSlack{200};
// Long enough that the cut-off leader steps down (about two election timeouts without a
// majority) before the lock could expire on it: an expiry there would be a write it cannot
// commit, and it would stop as a dirty leader (docs/CLUSTER.md).
constexpr milliseconds kPartitionLockTtl{4000};
constexpr int kPartitionKeys = 10;

std::string PartitionKey(int i) { return "k" + std::to_string(i); }
std::string PartitionValue(int i) { return "a" + std::to_string(i); }

// What the cut-off node may answer past its lease: nothing, or an error (-TRYAGAIN,
// -READONLY, ...). A value, a nil or +OK would be an answer from a keyspace that is no longer
// the cluster's.
bool PartitionRefused(const std::optional<std::string>& reply) {
  return !reply || reply->starts_with("-");
}

struct Partition {
  explicit Partition(int nodes)
      : c({"--enable-test-commands", "yes", "--raft-election-timeout",
           std::to_string(kPartitionElection.count()), "--raft-heartbeat-interval", "50"},
          nodes) {}
  Cluster c;
  int old_leader = -1;
  int leader = -1;
  PartitionClock::time_point lock_sent{};  // when the acknowledged SET NX was sent
  PartitionClock::time_point cut{};
  // Measured, printed at the end: from the cut to a new leader seen, to the old leader no
  // longer reporting itself leader; from RAFT-HEAL to the old leader caught up.
  milliseconds elected{}, stepped_down{}, caught_up{};
};

milliseconds PartitionSince(PartitionClock::time_point t) {
  return std::chrono::duration_cast<milliseconds>(PartitionClock::now() - t);
}

// The cut-off node, past its lease: GET of a key the new leader rewrote, SET NX of the lock the
// new leader holds and GET of a key only the new leader has. `round`: for the messages.
void ExpectCutOffNodeRefuses(const Partition& p, bool new_keys_written, int round) {
  const int port = p.c.port(p.old_leader);
  EXPECT_TRUE(PartitionRefused(Probe(port, {"GET", PartitionKey(0)})))
      << "the cut-off leader answered a read past its lease (round " << round << ")";
  const std::optional<std::string> grant =
      Probe(port, {"SET", "lock:p", "old", "NX", "PX", "60000"});
  EXPECT_TRUE(PartitionRefused(grant))
      << "the cut-off leader answered SET NX past its lease (round " << round
      << "): " << grant->substr(0, grant->find('\r'));
  if (new_keys_written) {
    EXPECT_TRUE(PartitionRefused(Probe(port, {"GET", "lock:q"})))
        << "the cut-off leader answered for a key only the new leader has (round " << round << ")";
  }
}

// Keys and a lock acknowledged by the first leader, then its Raft link cut.
void WriteAndCut(Partition& p) {
  p.old_leader = p.c.WaitLeader();
  ASSERT_NE(p.old_leader, -1) << "no leader within " << kElection.count() << " ms\n" << p.c.Logs();
  const int port = p.c.port(p.old_leader);
  for (int i = 0; i < kPartitionKeys; ++i) {
    ASSERT_EQ(Cmd(port, {"SET", PartitionKey(i), PartitionValue(i)}), "+OK\r\n");
  }
  p.lock_sent = PartitionClock::now();
  ASSERT_EQ(
      Cmd(port, {"SET", "lock:p", "holder", "NX", "PX", std::to_string(kPartitionLockTtl.count())}),
      "+OK\r\n");
  ASSERT_EQ(Cmd(port, {"TEST.FAULT", "RAFT-DROP", "ALL"}), "+OK\r\n");
  p.cut = PartitionClock::now();
}

// The majority elects another node, which takes writes and refuses the held lock.
void MajorityGoesOn(Partition& p) {
  ASSERT_TRUE(Eventually([&] { return (p.leader = p.c.Leader(p.old_leader)) != -1; }, kElection))
      << "the majority elected no leader within " << kElection.count() << " ms\n"
      << p.c.Logs();
  ASSERT_NE(p.leader, p.old_leader);
  p.elected = PartitionSince(p.cut);
  const int port = p.c.port(p.leader);
  ASSERT_EQ(Cmd(port, {"SET", PartitionKey(0), "b0"}), "+OK\r\n");
  ASSERT_EQ(Cmd(port, {"SET", "lock:q", "new", "NX", "PX", "60000"}), "+OK\r\n");
  const std::string held = Cmd(port, {"SET", "lock:p", "other", "NX", "PX", "60000"});
  if (PartitionClock::now() < p.lock_sent + kPartitionLockTtl) {
    EXPECT_EQ(held, "$-1\r\n") << "the new leader granted the acknowledged lock within its TTL";
  }
}

// The new leader grants the acknowledged lock again only once its TTL has passed since the
// client sent the SET (docs/CLUSTER.md, "Expiry and the new-leader rule", 3).
void NewLeaderHoldsTheLockUntilItsTtl(const Partition& p) {
  const int port = p.c.port(p.leader);
  std::string reply;
  const bool granted = Eventually(
      [&] {
        reply = Cmd(port, {"SET", "lock:p", "other", "NX", "PX", "60000"});
        if (reply == "+OK\r\n") return true;
        EXPECT_EQ(reply, "$-1\r\n");
        return false;
      },
      kPartitionLockTtl + milliseconds(5000));
  ASSERT_TRUE(granted) << "the lock never expired on the new leader: " << reply;
  EXPECT_GE(PartitionClock::now() - p.lock_sent, kPartitionLockTtl)
      << "the new leader granted the acknowledged lock before its TTL ran out";
}

// After RAFT-HEAL the old leader follows the new one and applies what it committed; its
// clients never read the value the cut replaced.
void HealAndCatchUp(Partition& p) {
  const int port = p.c.port(p.old_leader);
  ASSERT_EQ(Cmd(port, {"TEST.FAULT", "RAFT-HEAL"}), "+OK\r\n");
  const PartitionClock::time_point healed = PartitionClock::now();
  const std::uint64_t commit = RaftNumber(RaftStatus(p.c.port(p.leader)), "raft_commit_index");
  const std::string leader_id = std::to_string(p.leader + 1);
  const bool caught_up = Eventually(
      [&] {
        const std::optional<std::string> read = Probe(port, {"GET", PartitionKey(0)});
        EXPECT_NE(read, std::optional<std::string>(Bulk(PartitionValue(0))))
            << "the healed node served the value the new leader replaced";
        const RaftFields f = RaftStatus(port);
        return f.contains("raft_role") && f.at("raft_role") == "follower" &&
               f.at("raft_leader_id") == leader_id && RaftNumber(f, "raft_applied_index") >= commit;
      },
      milliseconds(10000));
  p.caught_up = PartitionSince(healed);
  ASSERT_TRUE(caught_up) << "the old leader did not catch up to index " << commit << "\n"
                         << p.c.Logs();
  // A follower that knows the leader relays its clients there.
  EXPECT_EQ(Cmd(port, {"GET", PartitionKey(0)}), Bulk("b0"));
  EXPECT_EQ(Cmd(port, {"SET", "lock:p", "old", "NX", "PX", "60000"}), "$-1\r\n");
}

// Every acknowledged write, read back from whoever leads now.
void NoAcknowledgedWriteLost(const Partition& p) {
  const int leader = p.c.WaitLeader();
  ASSERT_NE(leader, -1) << p.c.Logs();
  RawConnection conn(p.c.port(leader), milliseconds(5000));
  EXPECT_EQ(conn.CommandArgs({"GET", PartitionKey(0)}), Bulk("b0"));
  for (int i = 1; i < kPartitionKeys; ++i) {
    EXPECT_EQ(conn.CommandArgs({"GET", PartitionKey(i)}), Bulk(PartitionValue(i))) << i;
  }
  EXPECT_EQ(conn.CommandArgs({"GET", "lock:p"}), Bulk("other"));
  EXPECT_EQ(conn.CommandArgs({"GET", "lock:q"}), Bulk("new"));
}

void RunPartition(int nodes) {
  Partition p(nodes);
  std::string error;
  ASSERT_TRUE(p.c.Start(&error)) << error;
  ASSERT_NO_FATAL_FAILURE(WriteAndCut(p));
  // The claim under test is a deadline: the node must refuse from then on, so the test
  // waits for that time to pass rather than for something to happen.
  std::this_thread::sleep_until(p.cut + kPartitionLease + kPartitionSlack);
  ExpectCutOffNodeRefuses(p, false, 0);
  ASSERT_NO_FATAL_FAILURE(MajorityGoesOn(p));
  // libraft's leader steps down after an election timeout without hearing from a majority.
  EXPECT_TRUE(Eventually(
      [&] {
        const RaftFields f = RaftStatus(p.c.port(p.old_leader));
        return f.contains("raft_role") && f.at("raft_role") != "leader";
      },
      milliseconds(5000)))
      << "the cut-off leader still reports itself leader";
  p.stepped_down = PartitionSince(p.cut);
  for (int round = 1; round <= 3; ++round) ExpectCutOffNodeRefuses(p, true, round);
  ASSERT_NO_FATAL_FAILURE(NewLeaderHoldsTheLockUntilItsTtl(p));
  ExpectCutOffNodeRefuses(p, true, 4);
  ASSERT_NO_FATAL_FAILURE(HealAndCatchUp(p));
  ASSERT_NO_FATAL_FAILURE(NoAcknowledgedWriteLost(p));
  EXPECT_TRUE(p.c.alive(p.old_leader));
  std::printf(
      "partition of %d nodes: new leader %lld ms after the cut, old leader not leading "
      "by %lld ms, caught up %lld ms after the heal\n",
      nodes, static_cast<long long>(p.elected.count()),
      static_cast<long long>(p.stepped_down.count()), static_cast<long long>(p.caught_up.count()));
}

TEST(LatchdPartition, CutOffLeaderStopsWithinItsLeaseAndThreeNodesGoOn) { RunPartition(3); }

TEST(LatchdPartition, CutOffLeaderStopsWithinItsLeaseAndFiveNodesGoOn) { RunPartition(5); }

// A minority of followers cut off (one of three, two of five): the leader keeps its term and
// its majority, and acknowledges writes throughout; a cut-off follower never answers a value
// older than an acknowledged write (it relays to the leader over the client port, which the
// cut leaves alone, or refuses once it no longer knows a leader); after RAFT-HEAL the
// followers catch up without an election: with pre-vote (cluster/raft_loop.cpp), a node that
// heard from no leader for a while asks the others before raising its term, and they refuse.
void RunFollowerPartition(int nodes) {
  Partition p(nodes);
  std::string error;
  ASSERT_TRUE(p.c.Start(&error)) << error;
  p.leader = p.c.WaitLeader();
  ASSERT_NE(p.leader, -1) << p.c.Logs();
  const int port = p.c.port(p.leader);
  const std::string term = RaftStatus(port).at("raft_term");
  ASSERT_EQ(Cmd(port, {"SET", PartitionKey(0), "v0"}), "+OK\r\n");
  std::vector<int> cut;
  for (int i = 0; static_cast<int>(cut.size()) < (nodes - 1) / 2; ++i) {
    if (i != p.leader) cut.push_back(i);
  }
  for (int f : cut) ASSERT_EQ(Cmd(p.c.port(f), {"TEST.FAULT", "RAFT-DROP", "ALL"}), "+OK\r\n");
  // Five election timeouts: long past the cut-off followers' own timeouts.
  const auto until = PartitionClock::now() + 5 * kPartitionElection;
  for (int n = 1; PartitionClock::now() < until; ++n) {
    const std::string value = "v" + std::to_string(n);
    ASSERT_EQ(Cmd(port, {"SET", PartitionKey(0), value}), "+OK\r\n")
        << "the leader's majority did not acknowledge a write while a minority was cut off";
    for (int f : cut) {
      const std::optional<std::string> read = Probe(p.c.port(f), {"GET", PartitionKey(0)});
      EXPECT_TRUE(PartitionRefused(read) || *read == Bulk(value))
          << "cut-off follower " << f + 1 << " answered " << read->substr(0, read->find('\r'))
          << " after " << value << " was acknowledged";
    }
  }
  for (int f : cut) ASSERT_EQ(Cmd(p.c.port(f), {"TEST.FAULT", "RAFT-HEAL"}), "+OK\r\n");
  const PartitionClock::time_point healed = PartitionClock::now();
  const std::uint64_t commit = RaftNumber(RaftStatus(port), "raft_commit_index");
  const std::string leader_id = std::to_string(p.leader + 1);
  for (int f : cut) {
    EXPECT_TRUE(Eventually(
        [&] {
          const RaftFields fields = RaftStatus(p.c.port(f));
          return fields.contains("raft_role") && fields.at("raft_role") == "follower" &&
                 fields.at("raft_leader_id") == leader_id &&
                 RaftNumber(fields, "raft_applied_index") >= commit;
        },
        milliseconds(10000)))
        << "follower " << f + 1 << " did not catch up to index " << commit << "\n"
        << p.c.Logs();
  }
  p.caught_up = PartitionSince(healed);
  const RaftFields after = RaftStatus(port);
  EXPECT_EQ(after.at("raft_role"), "leader") << "the healed minority deposed the leader";
  EXPECT_EQ(after.at("raft_term"), term) << "the cut or the heal started an election";
  std::printf("minority partition of %d nodes: %zu cut off, caught up %lld ms after the heal\n",
              nodes, cut.size(), static_cast<long long>(p.caught_up.count()));
}

TEST(LatchdPartition, CutOffFollowerLeavesTheLeaderAndItsTermAloneThreeNodes) {
  RunFollowerPartition(3);
}

TEST(LatchdPartition, CutOffMinorityLeavesTheLeaderAndItsTermAloneFiveNodes) {
  RunFollowerPartition(5);
}

// The command's forms and errors, on a cluster node and on a single node.
TEST(LatchdPartition, RaftDropChecksItsArguments) {
  Cluster c({"--enable-test-commands", "yes"});
  std::string error;
  ASSERT_TRUE(c.Start(&error)) << error;
  const int port = c.port(0);
  EXPECT_EQ(Cmd(port, {"TEST.FAULT", "RAFT-DROP"}), "-ERR syntax error\r\n");
  EXPECT_EQ(Cmd(port, {"TEST.FAULT", "RAFT-DROP", "7"}), "-ERR Unknown node 7\r\n");
  EXPECT_EQ(Cmd(port, {"TEST.FAULT", "RAFT-DROP", "1"}), "-ERR Node 1 is this node\r\n");
  EXPECT_EQ(Cmd(port, {"TEST.FAULT", "RAFT-DROP", "x"}),
            "-ERR value is not an integer or out of range\r\n");
  EXPECT_EQ(Cmd(port, {"TEST.FAULT", "RAFT-DROP", "2", "9"}), "-ERR Unknown node 9\r\n");
  EXPECT_EQ(Cmd(port, {"TEST.FAULT", "RAFT-HEAL", "now"}), "-ERR syntax error\r\n");
  EXPECT_EQ(Cmd(port, {"TEST.FAULT", "RAFT"}),
            "-ERR unknown subcommand 'RAFT'. Try ERROR, TIMEOUT, DROP, DELAY, PAUSE, STALL, "
            "RESUME, RAFT-DROP, RAFT-HEAL or CLEAR.\r\n");
  EXPECT_EQ(Cmd(port, {"TEST.FAULT", "raft-drop", "2", "3"}), "+OK\r\n");
  EXPECT_EQ(Cmd(port, {"TEST.FAULT", "RAFT-HEAL"}), "+OK\r\n");
  EXPECT_EQ(Cmd(port, {"TEST.FAULT", "RAFT-DROP", "all"}), "+OK\r\n");
  EXPECT_EQ(Cmd(port, {"TEST.FAULT", "CLEAR"}), "+OK\r\n");

  LatchdProcess single({"--enable-test-commands", "yes"});
  ASSERT_TRUE(single.ok()) << single.error();
  EXPECT_EQ(Cmd(single.port(), {"TEST.FAULT", "RAFT-DROP", "ALL"}),
            "-ERR This instance has cluster support disabled\r\n");
  EXPECT_EQ(Cmd(single.port(), {"TEST.FAULT", "RAFT-HEAL"}),
            "-ERR This instance has cluster support disabled\r\n");
  EXPECT_EQ(Cmd(single.port(), {"TEST.FAULT", "CLEAR"}), "+OK\r\n");
}

}  // namespace
}  // namespace latch::test
