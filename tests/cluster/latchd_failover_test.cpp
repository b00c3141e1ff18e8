// The leader probe (docs/CLUSTER.md, "Failover"): followers start an election as soon as the
// leader's process is gone, instead of after libraft's randomized election timeout. A long
// election timeout (6 s; libraft waits [6 s, 12 s)) tells the probe's election from the
// timer's: only the probe can elect a leader within 3 s of the kill.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <string>
#include <vector>

#include "cluster/latchd_cluster.h"
#include "cluster/raft_probe.h"
#include "support/eventually.h"

namespace latch::test {
namespace {

using std::chrono::milliseconds;
using Steady = std::chrono::steady_clock;

constexpr milliseconds kLongTimeout{6000};
// The first election at the long timeout takes one to two timeouts, a split vote more.
constexpr milliseconds kFirstElection{40000};

std::vector<std::string> FailoverArgs(bool probe) {
  return {"--raft-election-timeout", std::to_string(kLongTimeout.count()), "--raft-leader-probe",
          probe ? "yes" : "no"};
}

// Starts `c` and waits for its first leader: -1 (the reason recorded as a failure) without.
int StartedFailoverLeader(Cluster& c) {
  std::string error;
  if (!c.Start(&error)) {
    ADD_FAILURE() << error;
    return -1;
  }
  const int leader = c.WaitLeader(-1, kFirstElection);
  if (leader == -1) ADD_FAILURE() << "no leader\n" << c.Logs();
  return leader;
}

// A SET NX sent to node `via` (forwarded to the leader), retried until acknowledged or
// until `limit` has passed: true once a ready leader granted it.
bool FailoverGrant(int port, const std::string& key, milliseconds limit) {
  return Eventually([&] { return Cmd(port, {"SET", key, "x", "NX", "PX", "60000"}) == "+OK\r\n"; },
                    limit);
}

// A node other than `skip` (of three).
int FailoverOther(int skip) { return skip == 0 ? 1 : 0; }

TEST(LatchdFailover, Kill9OfTheLeaderElectsWellBeforeTheElectionTimeout) {
  Cluster c(FailoverArgs(true));
  const int old_leader = StartedFailoverLeader(c);
  ASSERT_NE(old_leader, -1);
  ASSERT_EQ(Cmd(c.port(old_leader), {"SET", "before", "1"}), "+OK\r\n");
  const int via = FailoverOther(old_leader);
  const auto killed = Steady::now();
  c.Kill9(old_leader);
  EXPECT_TRUE(FailoverGrant(c.port(via), "lock:after", milliseconds(3000)))
      << "no grant within 3 s of the kill (the timer alone needs at least 6 s)\n"
      << c.Logs();
  const auto took = std::chrono::duration_cast<milliseconds>(Steady::now() - killed);
  EXPECT_LT(took, milliseconds(3000));
  EXPECT_EQ(Cmd(c.port(via), {"GET", "before"}), "$1\r\n1\r\n");
}

// SIGSTOP closes no socket: the probe sees nothing, and the leader keeps its term and its
// place when it wakes within the timeout. While it sleeps, no other node grants.
TEST(LatchdFailover, SigstopShorterThanTheTimeoutCausesNoElection) {
  Cluster c(FailoverArgs(true));
  const int leader = StartedFailoverLeader(c);
  ASSERT_NE(leader, -1);
  ASSERT_EQ(Cmd(c.port(leader), {"SET", "lock:held", "a", "NX", "PX", "60000"}), "+OK\r\n");
  const std::uint64_t term = RaftNumber(RaftStatus(c.port(leader)), "raft_term");
  ASSERT_NE(term, 0u);
  c.Signal(leader, SIGSTOP);
  ASSERT_TRUE(c.WaitStopped(leader));
  const auto stopped = Steady::now();
  // Well within the 6 s timeout: 2 s of asking the other nodes for a grant and for their term.
  int asked = 0;
  while (Steady::now() - stopped < milliseconds(2000) && asked < 200) {
    ++asked;
    for (int i = 0; i < c.size(); ++i) {
      if (i == leader) continue;
      RawConnection conn(c.port(i), milliseconds(300));
      const std::string grant = conn.CommandArgs({"SET", "lock:held", "b", "NX", "PX", "60000"});
      EXPECT_NE(grant, "+OK\r\n") << "node " << i + 1 << " granted a held lock";
      EXPECT_EQ(RaftNumber(RaftStatus(c.port(i)), "raft_term"), term) << "node " << i + 1;
    }
  }
  c.Signal(leader, SIGCONT);
  EXPECT_TRUE(Eventually([&] { return c.Leader() == leader; }, milliseconds(5000))) << c.Logs();
  EXPECT_EQ(RaftNumber(RaftStatus(c.port(leader)), "raft_term"), term);
  EXPECT_EQ(Cmd(c.port(leader), {"GET", "lock:held"}), "$1\r\na\r\n");
}

// raft-leader-probe no: the timer alone, so nothing is granted for at least the timeout.
TEST(LatchdFailover, WithoutTheProbeKill9WaitsForTheElectionTimeout) {
  Cluster c(FailoverArgs(false));
  const int old_leader = StartedFailoverLeader(c);
  ASSERT_NE(old_leader, -1);
  ASSERT_EQ(Cmd(c.port(old_leader), {"CONFIG", "GET", "raft-leader-probe"}),
            "*2\r\n" + Bulk("raft-leader-probe") + Bulk("no"));
  const int via = FailoverOther(old_leader);
  const auto killed = Steady::now();
  c.Kill9(old_leader);
  EXPECT_FALSE(FailoverGrant(c.port(via), "lock:early", milliseconds(4000))) << c.Logs();
  EXPECT_GE(Steady::now() - killed, milliseconds(4000));
  EXPECT_TRUE(FailoverGrant(c.port(via), "lock:late", kFirstElection)) << c.Logs();
}

// SIGTERM of the leader with the probe on: it hands leadership over (raft-leader-probe does
// not change the clean path) and every acknowledged write survives.
TEST(LatchdFailover, SigtermOfTheLeaderHandsOverWithEveryAcknowledgedWrite) {
  Cluster c({"--raft-leader-probe", "yes"});
  std::string error;
  ASSERT_TRUE(c.Start(&error)) << error;
  const int old_leader = c.WaitLeader();
  ASSERT_NE(old_leader, -1) << c.Logs();
  for (int k = 0; k < 20; ++k) {
    ASSERT_EQ(Cmd(c.port(old_leader), {"SET", "w" + std::to_string(k), std::to_string(k)}),
              "+OK\r\n");
  }
  const int status = c.Stop(old_leader);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "wait status " << status;
  const int leader = c.WaitLeader();
  ASSERT_NE(leader, -1) << c.Logs();
  for (int k = 0; k < 20; ++k) {
    EXPECT_EQ(Cmd(c.port(leader), {"GET", "w" + std::to_string(k)}),
              Bulk(std::to_string(k)));
  }
}

}  // namespace
}  // namespace latch::test
