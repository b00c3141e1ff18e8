// Three latchd processes on loopback as one Raft cluster (raft-peers; docs/CLUSTER.md): a
// leader is elected, a lock taken on it is on both followers once acknowledged, followers
// relay what needs the leader, and after kill -9 of the leader the new leader still holds the lock
// until its TTL ran out. Ports are picked at run time; every wait is a condition with a deadline.
#include "cluster/latchd_cluster.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "support/eventually.h"
#include "support/free_port.h"
#include "support/raw_connection.h"
#include "support/server_process.h"
#include "support/shell.h"

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
  const auto sent = SteadyClock::now();
  for (int i = 0; i < Cluster::kNodes; ++i) {
    if (i == leader) continue;
    // Followers relay what needs the leader (docs/CLUSTER.md, "Forwarding"): the answers
    // are the leader's, reads included (linearizable).
    EXPECT_EQ(Cmd(c.port(i), {"GET", "lock:a"}), Bulk("owner-1"));
    EXPECT_GT(IntegerOf(Cmd(c.port(i), {"PTTL", "lock:a"})), 0);
    EXPECT_EQ(Cmd(c.port(i), {"SET", "lock:a", "owner-3", "NX", "PX", "1000"}), "$-1\r\n");
    // A pipeline repeats one command, the dispatcher's fast path: relayed all the same.
    RawConnection conn(c.port(i), milliseconds(5000));
    ASSERT_TRUE(conn.Send(RawConnection::Encode({"SET", "lock:p", "x"}) +
                          RawConnection::Encode({"SET", "lock:p", "y"}) +
                          RawConnection::Encode({"GET", "lock:p"}) +
                          RawConnection::Encode({"GET", "lock:p"})));
    for (int n = 0; n < 2; ++n) EXPECT_EQ(conn.ReadReply().value_or("(none)"), "+OK\r\n");
    for (int n = 0; n < 2; ++n) EXPECT_EQ(conn.ReadReply().value_or("(none)"), Bulk("y"));
  }
  EXPECT_EQ(Cmd(c.port(leader), {"SET", "lock:a", "owner-2", "NX", "PX", "30000"}), "$-1\r\n");
  // Both followers had the entry (it was acknowledged): the next leader holds the lock, with
  // a TTL that ran from when it applied the entry, plus the clock-rate margin.
  c.Kill9(leader);
  const int next = c.WaitLeader();
  ASSERT_NE(next, -1) << "no new leader within " << kElection.count() << " ms\n" << c.Logs();
  EXPECT_EQ(Cmd(c.port(next), {"GET", "lock:a"}), Bulk("owner-1"));
  const std::int64_t pttl = IntegerOf(Cmd(c.port(next), {"PTTL", "lock:a"}));
  const auto since = std::chrono::duration_cast<milliseconds>(SteadyClock::now() - sent);
  EXPECT_GT(pttl, 30000 - since.count() - 1000);
  EXPECT_LE(pttl, 30030);
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
  EXPECT_EQ(Cmd(c.port(leader), {"GET", "lock:k"}), Bulk("owner-2"));
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
  for (int i : followers) ASSERT_TRUE(c.WaitStopped(i)) << "node " << i + 1 << " did not stop";
  RawConnection conn(c.port(old_leader), milliseconds(15000));
  ASSERT_TRUE(conn.Connect(c.port(old_leader)));
  ASSERT_TRUE(conn.Send(RawConnection::Encode({"SET", "lock:cut", "x", "NX", "PX", "30000"})));
  std::string trailing;
  EXPECT_TRUE(conn.WaitClosed(&trailing)) << c.Log(old_leader);
  EXPECT_EQ(trailing, "");
  // The node closes the connection before it logs why (ClusterLog::Proposed answers the held
  // replies first): read its log once the line is there, or after a deadline.
  std::string log;
  Eventually([&] {
    log = c.Log(old_leader);
    return log.find("lost leadership with writes not committed") != std::string::npos;
  });
  // Stopped on a fault: a supervisor must see a failure.
  const int status = c.WaitExit(old_leader);
  EXPECT_NE(status, -1) << "the old leader did not stop\n" << log;
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << "wait status " << status;
  EXPECT_NE(log.find("lost leadership with writes not committed"), std::string::npos) << log;
  for (int i : followers) c.Signal(i, SIGCONT);
  const int leader = c.WaitLeader();
  ASSERT_NE(leader, -1) << "no new leader within " << kElection.count() << " ms\n" << c.Logs();
  // The write may still commit (the followers can have received it before they stopped, and
  // a new leader commits what it holds): the outcome is unknown to the client. (Followers
  // answer no reads; that both live nodes apply one log is raft_node_test's.)
  const std::string value = Cmd(c.port(leader), {"GET", "lock:cut"});
  EXPECT_TRUE(value == "$-1\r\n" || value == Bulk("x")) << value;
}

// Fencing tokens come from the Raft term (term << 40, docs/CLUSTER.md "Fencing tokens"), not
// from a wall clock (whose tokens are about 2^60), and every token after a leader change is
// above every token before it, in a higher term's range.
TEST(LatchdCluster, FencingTokensComeFromTheTermAndRiseAcrossAKillNine) {
  Cluster c;
  std::string error;
  ASSERT_TRUE(c.Start(&error)) << error;
  const int old_leader = c.WaitLeader();
  ASSERT_NE(old_leader, -1) << "no leader within " << kElection.count() << " ms\n" << c.Logs();
  std::int64_t last = 0;
  auto acquire = [&](int node, int n) {
    const std::string key = "fence:" + std::to_string(n);
    const std::string reply = Cmd(c.port(node), {"LOCK.ACQUIRE", key, "owner", "60000"});
    const std::int64_t token = IntegerOf(reply);
    EXPECT_GT(token, last) << key << ": " << reply;
    EXPECT_LT(token, std::int64_t{1} << 50) << key << ": not from the term";
    last = std::max(last, token);
    return token;
  };
  std::int64_t before = 0;
  for (int n = 0; n < 5; ++n) before = acquire(old_leader, n);
  EXPECT_GE(before >> 40, 1);
  c.Kill9(old_leader);
  const int leader = c.WaitLeader();
  ASSERT_NE(leader, -1) << "no new leader within " << kElection.count() << " ms\n" << c.Logs();
  for (int n = 5; n < 10; ++n) {
    const std::int64_t token = acquire(leader, n);
    EXPECT_GT(token >> 40, before >> 40) << "not in a later term's range";
  }
}

// A leader stopped (SIGSTOP) past the election timeout is deposed while it sleeps; the others
// elect a leader that overwrites a key and grants a lock. When the old leader wakes, requests
// that reached it while it slept (and later ones) get neither the old value nor a grant: its
// lease ran out, so it answers a read only after a barrier, which it cannot commit, or
// refuses as a follower (docs/CLUSTER.md, "Linearizable reads").
TEST(LatchdCluster, DeposedLeaderWakingFromSigstopNeitherGrantsNorReadsStale) {
  Cluster c;
  std::string error;
  ASSERT_TRUE(c.Start(&error)) << error;
  const int old_leader = c.WaitLeader();
  ASSERT_NE(old_leader, -1) << "no leader within " << kElection.count() << " ms\n" << c.Logs();
  ASSERT_EQ(Cmd(c.port(old_leader), {"SET", "k", "v1"}), "+OK\r\n");
  c.Signal(old_leader, SIGSTOP);
  ASSERT_TRUE(c.WaitStopped(old_leader));
  const int leader = c.WaitLeader(old_leader);
  if (leader == -1) c.Signal(old_leader, SIGCONT);
  ASSERT_NE(leader, -1) << "no new leader within " << kElection.count() << " ms\n" << c.Logs();
  EXPECT_EQ(Cmd(c.port(leader), {"SET", "k", "v2"}), "+OK\r\n");
  EXPECT_EQ(Cmd(c.port(leader), {"SET", "lock:g", "new", "NX", "PX", "60000"}), "+OK\r\n");
  // Queued in the sleeping node's socket buffers: it reads them as soon as it runs again.
  RawConnection read(milliseconds(5000)), grant(milliseconds(5000));
  ASSERT_TRUE(read.Connect(c.port(old_leader)));
  ASSERT_TRUE(grant.Connect(c.port(old_leader)));
  ASSERT_TRUE(read.Send(RawConnection::Encode({"GET", "k"})));
  ASSERT_TRUE(grant.Send(RawConnection::Encode({"SET", "lock:g", "old", "NX", "PX", "60000"})));
  c.Signal(old_leader, SIGCONT);
  auto stale = [](const std::optional<std::string>& r) { return r && *r == Bulk("v1"); };
  const std::optional<std::string> read_reply = read.ReadReply();
  EXPECT_FALSE(stale(read_reply)) << "the deposed leader answered a stale read";
  const std::optional<std::string> grant_reply = grant.ReadReply();
  EXPECT_FALSE(grant_reply && *grant_reply == "+OK\r\n") << "the deposed leader granted a lock";
  // Later requests too, for a while (bounded): a refusal, the new value, or no answer.
  for (int i = 0; i < 20 && c.alive(old_leader); ++i) {
    RawConnection conn(milliseconds(2000));
    // It stopped (a dirty leader): refused, or accepted and closed as it shuts down.
    if (!conn.Connect(c.port(old_leader))) break;
    if (!conn.Send(RawConnection::Encode({"GET", "k"}))) break;
    EXPECT_FALSE(stale(conn.ReadReply())) << "stale read on request " << i;
  }
  EXPECT_EQ(Cmd(c.port(leader), {"GET", "lock:g"}), Bulk("new"));
}

// SWAPDB reports no key event: it is recorded in the log by itself, so the next leader holds
// the swapped databases.
TEST(LatchdCluster, SwapdbIsInTheLogAndSurvivesAKillNine) {
  Cluster c;
  std::string error;
  ASSERT_TRUE(c.Start(&error)) << error;
  const int old_leader = c.WaitLeader();
  ASSERT_NE(old_leader, -1) << "no leader within " << kElection.count() << " ms\n" << c.Logs();
  ASSERT_EQ(Cmd(c.port(old_leader), {"SET", "k", "in-db0"}), "+OK\r\n");
  ASSERT_EQ(Cmd(c.port(old_leader), {"SWAPDB", "0", "1"}), "+OK\r\n");
  c.Kill9(old_leader);
  const int leader = c.WaitLeader();
  ASSERT_NE(leader, -1) << "no new leader within " << kElection.count() << " ms\n" << c.Logs();
  RawConnection conn(c.port(leader), milliseconds(5000));
  EXPECT_EQ(conn.CommandArgs({"GET", "k"}), "$-1\r\n");
  EXPECT_EQ(conn.CommandArgs({"SELECT", "1"}), "+OK\r\n");
  EXPECT_EQ(conn.CommandArgs({"GET", "k"}), Bulk("in-db0"));
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
  ExpectRefused({"--raft-id", "1", "--raft-peers", "1=127.0.0.1:" + r1 + ":" + c1,
                 "--raft-snapshot-threshold", "0"},
                "'raft-snapshot-threshold \"0\"'\nargument must be between 1 and 1000000000");
  ExpectRefused({"--raft-id", "1", "--raft-peers", "1=127.0.0.1:" + r1 + ":" + c1,
                 "--raft-snapshot-trailing", "-1"},
                "'raft-snapshot-trailing \"-1\"'\nargument must be between 0 and 1000000000");
  // A Raft port another process holds: said as such (libraft's own message is empty).
  const int taken = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  sa.sin_port = htons(static_cast<std::uint16_t>(std::stoi(r1)));
  ASSERT_EQ(::bind(taken, reinterpret_cast<const sockaddr*>(&sa), sizeof sa), 0);
  ASSERT_EQ(::listen(taken, 1), 0);
  // (Run directly: the process harness would take "Address already in use" for its own client
  // port and retry on another.)
  const std::string dir = ::testing::TempDir() + "latch-raft-taken-" + std::to_string(::getpid());
  const auto [out, status] =
      RunShellCommand(std::string(LATCHD_PATH) + " --port " + c1 +
                      " --bind 127.0.0.1 --raft-id 1 --raft-peers '1=127.0.0.1:" + r1 + ":" + c1 +
                      "' --raft-dir " + dir);
  ::close(taken);
  std::filesystem::remove_all(dir);
  EXPECT_EQ(status, 1) << out;
  EXPECT_NE(out.find("raft-addr 127.0.0.1:" + r1 + ": Address already in use"), std::string::npos)
      << out;
}

}  // namespace
}  // namespace latch::test
