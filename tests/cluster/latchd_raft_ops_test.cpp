// A cluster's operations (docs/CLUSTER.md, "Membership and operations") over real latchd
// processes on loopback: RAFT STATUS on every node, the latch_raft_* metrics over an HTTP
// scrape, RAFT TRANSFER, a leader handing over on SIGTERM, RAFT ADD and REMOVE of a node
// started to join, the commands' errors, and a raft-dir of another cluster refused.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cluster/latchd_cluster.h"
#include "cluster/raft_probe.h"
#include "support/http_connection.h"
#include "support/shell.h"

namespace latch::test {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

constexpr std::string_view kRaftOpsTryAgain = "-TRYAGAIN no Raft leader is known, retry later\r\n";

// The value of an unlabelled (or exactly labelled) sample in a Prometheus text body; -1 when
// it is absent.
double Sample(const std::string& body, const std::string& series) {
  const std::string prefix = series + " ";
  std::size_t pos = 0;
  while ((pos = body.find(prefix, pos)) != std::string::npos) {
    if (pos == 0 || body[pos - 1] == '\n') return std::stod(body.substr(pos + prefix.size()));
    pos += prefix.size();
  }
  return -1;
}

std::string Scrape(int metrics_port) {
  HttpConnection http(metrics_port);
  return http.Request("GET", "/metrics").body;
}

// Node `i` of `c` leads and accepts writes (its election barrier applied).
bool Serving(const Cluster& c, int i) { return RaftStatus(c.port(i))["raft_serving"] == "1"; }

int Other(int a, int b = -1) {
  for (int i = 0; i < Cluster::kNodes; ++i) {
    if (i != a && i != b) return i;
  }
  return -1;
}

TEST(LatchdRaftOps, StatusOnEveryNodeAndRefusedOnASingleNode) {
  Cluster c;
  std::string error;
  ASSERT_TRUE(c.Start(&error)) << error;
  const int leader = c.WaitLeader();
  ASSERT_NE(leader, -1) << c.Logs();
  ASSERT_EQ(Cmd(c.port(leader), {"SET", "k", "v"}), "+OK\r\n");
  // RAFT STATUS is the node's state after its last loop iteration: the SET's apply shows
  // within one.
  std::map<std::string, std::string> lead;
  EXPECT_TRUE(Eventually([&] {
    lead = RaftStatus(c.port(leader));
    return RaftNumber(lead, "raft_applied_index") >= 3;  // bootstrap, barrier, the SET
  }));
  EXPECT_EQ(lead.at("raft_role"), "leader");
  EXPECT_EQ(lead.at("raft_serving"), "1");
  EXPECT_EQ(lead.at("raft_id"), std::to_string(leader + 1));
  EXPECT_EQ(lead.at("raft_leader_id"), std::to_string(leader + 1));
  EXPECT_EQ(lead.at("raft_leader_address"), "127.0.0.1:" + std::to_string(c.raft_port(leader)));
  EXPECT_EQ(lead.at("raft_members"), "3");
  EXPECT_GE(RaftNumber(lead, "raft_last_index"), RaftNumber(lead, "raft_commit_index"));
  EXPECT_EQ(lead.at("raft_snapshot_index"), "0");
  for (int i = 0; i < Cluster::kNodes; ++i) {
    const std::string& m = lead.at("member" + std::to_string(i));
    EXPECT_NE(m.find("address=127.0.0.1:" + std::to_string(c.raft_port(i))), std::string::npos)
        << m;
    EXPECT_NE(m.find("role=voter"), std::string::npos) << m;
    // The leader's view of each follower: its match index.
    EXPECT_EQ(m.find("match_index=") != std::string::npos, i != leader) << m;
  }
  // Followers: the same leader and term, their own role; no match indexes.
  for (int i = 0; i < Cluster::kNodes; ++i) {
    if (i == leader) continue;
    std::map<std::string, std::string> f;
    // The commit index reaches followers with the next heartbeat.
    EXPECT_TRUE(Eventually([&] {
      f = RaftStatus(c.port(i));
      return RaftNumber(f, "raft_applied_index") >= RaftNumber(lead, "raft_applied_index");
    }));
    EXPECT_EQ(f["raft_role"], "follower");
    EXPECT_EQ(f["raft_serving"], "0");
    EXPECT_EQ(f["raft_term"], lead.at("raft_term"));
    EXPECT_EQ(f["raft_leader_id"], std::to_string(leader + 1));
    EXPECT_EQ(f["member0"].find("match_index"), std::string::npos);
  }
  // A single latchd answers as a Redis without cluster support answers CLUSTER.
  LatchdProcess single;
  ASSERT_TRUE(single.ok()) << single.error();
  const std::string disabled = "-ERR This instance has cluster support disabled\r\n";
  EXPECT_EQ(Cmd(single.port(), {"RAFT", "STATUS"}), disabled);
  EXPECT_EQ(Cmd(single.port(), {"RAFT", "TRANSFER", "2"}), disabled);
  EXPECT_EQ(Cmd(single.port(), {"RAFT", "ADD", "4", "127.0.0.1:1:2"}), disabled);
  EXPECT_EQ(Cmd(single.port(), {"RAFT", "REMOVE", "2"}), disabled);
}

TEST(LatchdRaftOps, CommandsRefuseBadInput) {
  Cluster c;
  std::string error;
  ASSERT_TRUE(c.Start(&error)) << error;
  const int leader = c.WaitLeader();
  ASSERT_NE(leader, -1) << c.Logs();
  const int lp = c.port(leader);
  const int follower = Other(leader);
  const std::string leader_id = std::to_string(leader + 1);
  EXPECT_EQ(Cmd(lp, {"RAFT", "TRANSFER"}),
            "-ERR wrong number of arguments for 'raft|transfer' command\r\n");
  EXPECT_EQ(Cmd(lp, {"RAFT", "ADD", "4"}),
            "-ERR wrong number of arguments for 'raft|add' command\r\n");
  EXPECT_EQ(Cmd(lp, {"RAFT", "REMOVE", "1", "2"}),
            "-ERR wrong number of arguments for 'raft|remove' command\r\n");
  EXPECT_EQ(Cmd(lp, {"RAFT", "NOPE"}), "-ERR unknown subcommand 'NOPE'. Try RAFT HELP.\r\n");
  const std::string not_integer = "-ERR value is not an integer or out of range\r\n";
  EXPECT_EQ(Cmd(lp, {"RAFT", "TRANSFER", "two"}), not_integer);
  EXPECT_EQ(Cmd(lp, {"RAFT", "TRANSFER", "0"}), not_integer);
  EXPECT_EQ(Cmd(lp, {"RAFT", "REMOVE", "-1"}), not_integer);
  EXPECT_EQ(Cmd(lp, {"RAFT", "ADD", "x", "127.0.0.1:1:2"}), not_integer);
  EXPECT_EQ(Cmd(lp, {"RAFT", "TRANSFER", "9"}), "-ERR Unknown node 9\r\n");
  EXPECT_EQ(Cmd(lp, {"RAFT", "REMOVE", "9"}), "-ERR Unknown node 9\r\n");
  for (const std::string bad : {"127.0.0.1:1", "127.0.0.1:x:2", "127.0.0.1:1:70000", ":1:2"}) {
    EXPECT_EQ(Cmd(lp, {"RAFT", "ADD", "4", bad}),
              "-ERR Invalid node address specified: " + bad +
                  " (expected HOST:RAFTPORT:CLIENTPORT, HOST an IPv4 address or name)\r\n");
  }
  EXPECT_EQ(Cmd(lp, {"RAFT", "ADD", "2", "127.0.0.1:1:2"}), "-ERR Node 2 is already a member\r\n");
  const std::string taken = "127.0.0.1:" + std::to_string(c.raft_port(follower));
  EXPECT_EQ(Cmd(lp, {"RAFT", "ADD", "4", taken + ":1"}),
            "-ERR Raft address " + taken + " is node " + std::to_string(follower + 1) + "'s\r\n");
  EXPECT_EQ(Cmd(lp, {"RAFT", "REMOVE", leader_id}),
            "-ERR Can't remove the leader: move leadership with RAFT TRANSFER first\r\n");
  EXPECT_EQ(Cmd(lp, {"RAFT", "TRANSFER", leader_id}), "+OK\r\n");  // leads already
  // A follower names the leader instead of changing anything.
  const std::string where = "node " + leader_id + " at 127.0.0.1:" + std::to_string(lp) + "\r\n";
  const int fp = c.port(follower);
  EXPECT_EQ(Cmd(fp, {"RAFT", "TRANSFER", std::to_string(follower + 1)}),
            "-ERR This node is not the Raft leader: send RAFT TRANSFER to the leader, " + where);
  EXPECT_EQ(Cmd(fp, {"RAFT", "REMOVE", leader_id}),
            "-ERR This node is not the Raft leader: send RAFT REMOVE to the leader, " + where);
  EXPECT_EQ(Cmd(fp, {"RAFT", "ADD", "4", "127.0.0.1:1:2"}),
            "-ERR This node is not the Raft leader: send RAFT ADD to the leader, " + where);
  // Inside MULTI: refused when EXEC runs it (a change cannot be waited for there).
  RawConnection conn(lp, milliseconds(5000));
  EXPECT_EQ(conn.CommandArgs({"MULTI"}), "+OK\r\n");
  EXPECT_EQ(conn.CommandArgs({"RAFT", "TRANSFER", std::to_string(follower + 1)}), "+QUEUED\r\n");
  EXPECT_EQ(conn.CommandArgs({"EXEC"}),
            "*1\r\n-ERR RAFT TRANSFER can't be used in a transaction\r\n");
  // Nothing changed: the same leader, three voters.
  EXPECT_EQ(RaftStatus(lp)["raft_serving"], "1");
  EXPECT_EQ(RaftStatus(lp)["raft_members"], "3");
}

// The latch_raft_* series over a real HTTP scrape of each node.
TEST(LatchdRaftOps, MetricsOnEveryNode) {
  Cluster c;
  c.EnableMetrics();
  std::string error;
  ASSERT_TRUE(c.Start(&error)) << error;
  const int leader = c.WaitLeader();
  ASSERT_NE(leader, -1) << c.Logs();
  ASSERT_EQ(Cmd(c.port(leader), {"SET", "k", "v"}), "+OK\r\n");
  // The gauges are the node's state after its last loop iteration, and followers learn of
  // commits with the next heartbeat: each scrape is retried until it shows the SET.
  auto peer_match = [](const std::string& body, int i) {
    return Sample(body, "latch_raft_peer_match_index{peer=\"" + std::to_string(i + 1) + "\"}");
  };
  std::string lead;
  EXPECT_TRUE(Eventually([&] {
    lead = Scrape(c.metrics_port(leader));
    for (int i = 0; i < Cluster::kNodes; ++i) {
      if (i != leader && peer_match(lead, i) < 3) return false;
    }
    return Sample(lead, "latch_raft_applied_index") >= 3;
  })) << lead;
  const auto st = RaftStatus(c.port(leader));
  EXPECT_EQ(Sample(lead, "latch_raft_is_leader"), 1);
  EXPECT_EQ(Sample(lead, "latch_raft_term"), static_cast<double>(RaftNumber(st, "raft_term")));
  EXPECT_GE(Sample(lead, "latch_raft_commit_index"), 3);
  EXPECT_GE(Sample(lead, "latch_raft_applied_index"), 3);
  EXPECT_GE(Sample(lead, "latch_raft_leader_changes_total"), 1);
  EXPECT_NE(lead.find("# TYPE latch_raft_leader_changes_total counter\n"), std::string::npos);
  EXPECT_NE(lead.find("# TYPE latch_raft_peer_match_index gauge\n"), std::string::npos);
  EXPECT_EQ(peer_match(lead, leader), -1) << lead;  // no series for itself
  for (int i = 0; i < Cluster::kNodes; ++i) {
    if (i == leader) continue;
    std::string body;
    EXPECT_TRUE(Eventually([&] {
      body = Scrape(c.metrics_port(i));
      return Sample(body, "latch_raft_applied_index") >= 3;
    })) << body;
    EXPECT_EQ(Sample(body, "latch_raft_is_leader"), 0) << body;
    EXPECT_EQ(Sample(body, "latch_raft_term"), static_cast<double>(RaftNumber(st, "raft_term")));
    EXPECT_GE(Sample(body, "latch_raft_commit_index"), 3);
    // At least the leader it follows (more if a loaded machine had an election flap).
    EXPECT_GE(Sample(body, "latch_raft_leader_changes_total"), 1) << body;
    EXPECT_EQ(body.find("latch_raft_peer_match_index{"), std::string::npos) << body;
  }
  // A transfer is a change of leader on every node, and moves the gauges.
  const int target = Other(leader);
  ASSERT_EQ(Cmd(c.port(leader), {"RAFT", "TRANSFER", std::to_string(target + 1)}), "+OK\r\n")
      << c.Logs();
  EXPECT_TRUE(Eventually(
      [&] { return Sample(Scrape(c.metrics_port(target)), "latch_raft_is_leader") == 1; }));
  const std::string old = Scrape(c.metrics_port(leader));
  EXPECT_EQ(Sample(old, "latch_raft_is_leader"), 0) << old;
  EXPECT_GE(Sample(old, "latch_raft_leader_changes_total"), 2) << old;
  EXPECT_GT(Sample(old, "latch_raft_term"), static_cast<double>(RaftNumber(st, "raft_term")));
  EXPECT_EQ(old.find("latch_raft_peer_match_index{"), std::string::npos) << old;
}

TEST(LatchdRaftOps, TransferMovesLeadershipAndKeepsLocks) {
  Cluster c;
  std::string error;
  ASSERT_TRUE(c.Start(&error)) << error;
  const int leader = c.WaitLeader();
  ASSERT_NE(leader, -1) << c.Logs();
  RawConnection conn(c.port(leader), milliseconds(5000));
  ASSERT_EQ(conn.CommandArgs({"SET", "lock:a", "owner-1", "NX", "PX", "60000"}), "+OK\r\n");
  const int target = Other(leader);
  const auto start = steady_clock::now();
  // The connection that asked is kept; the others are closed, as on stepping down.
  RawConnection bystander(c.port(leader), milliseconds(5000));
  ASSERT_EQ(bystander.CommandArgs({"PING"}), "+PONG\r\n");
  EXPECT_EQ(conn.CommandArgs({"RAFT", "TRANSFER", std::to_string(target + 1)}), "+OK\r\n")
      << c.Logs();
  std::printf("RAFT TRANSFER answered after %lld ms\n",
              static_cast<long long>(
                  std::chrono::duration_cast<milliseconds>(steady_clock::now() - start).count()));
  EXPECT_TRUE(bystander.WaitClosed());
  // The target leads: it says so, and every node agrees.
  EXPECT_TRUE(Eventually([&] { return c.Leader() == target; }, kElection)) << c.Logs();
  EXPECT_TRUE(Serving(c, target));
  const int tp = c.port(target);
  EXPECT_EQ(Cmd(tp, {"SET", "after", "transfer"}), "+OK\r\n");
  EXPECT_EQ(Cmd(tp, {"GET", "after"}), Bulk("transfer"));
  // The lock taken before is still held, by its owner.
  EXPECT_EQ(Cmd(tp, {"SET", "lock:a", "owner-2", "NX", "PX", "60000"}), "$-1\r\n");
  EXPECT_EQ(Cmd(tp, {"GET", "lock:a"}), Bulk("owner-1"));
  const std::int64_t pttl = IntegerOf(Cmd(tp, {"PTTL", "lock:a"}));
  EXPECT_GT(pttl, 50000);
  EXPECT_LE(pttl, 60000 + 60);  // the follower's clock-rate margin (docs/CLUSTER.md)
  // The old leader answers no read itself any more, on the connection that asked either: it
  // relays the read to the new leader (forwarding), whose answer is the lock's owner.
  EXPECT_EQ(conn.CommandArgs({"GET", "lock:a"}), Bulk("owner-1"));
  EXPECT_TRUE(Eventually([&] { return RaftStatus(c.port(leader))["raft_role"] == "follower"; }));
}

// A leader that gets SIGTERM hands leadership to a follower before it exits: a new leader
// serves well before an election timeout would have let one be elected.
TEST(LatchdRaftOps, SigtermOfTheLeaderHandsLeadershipOver) {
  Cluster c;
  std::string error;
  ASSERT_TRUE(c.Start(&error)) << error;
  const int leader = c.WaitLeader();
  ASSERT_NE(leader, -1) << c.Logs();
  ASSERT_EQ(Cmd(c.port(leader), {"SET", "lock:a", "owner-1", "NX", "PX", "60000"}), "+OK\r\n");
  const auto start = steady_clock::now();
  c.Signal(leader, SIGTERM);
  // A write acknowledged through another node (a follower relays it to the new leader).
  ASSERT_TRUE(Eventually(
      [&] {
        for (int i = 0; i < Cluster::kNodes; ++i) {
          if (i != leader && Cmd(c.port(i), {"SET", "probe", "1"}) == "+OK\r\n") return true;
        }
        return false;
      },
      kElection))
      << c.Logs();
  const auto took = std::chrono::duration_cast<milliseconds>(steady_clock::now() - start);
  const int next = c.WaitLeader(leader);
  ASSERT_NE(next, -1) << c.Logs();
  std::printf(
      "SIGTERM of the leader -> a write acknowledged by node %d after %lld ms "
      "(election timeout 1000 ms)\n",
      next + 1, static_cast<long long>(took.count()));
  const std::string old_log = c.Log(leader);
  const int status = c.WaitExit(leader);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_NE(old_log.find("handed leadership over before stopping"), std::string::npos) << old_log;
  EXPECT_NE(next, leader);
  EXPECT_EQ(Cmd(c.port(next), {"GET", "lock:a"}), Bulk("owner-1"));
  // An election was not needed: the new leader's term is the next one (a transfer's), and
  // the remaining follower follows it.
  const int third = Other(leader, next);
  EXPECT_TRUE(Eventually(
      [&] { return RaftStatus(c.port(third))["raft_leader_id"] == std::to_string(next + 1); }));
}

// A fourth node started to join (raft-addr, an id not in raft-peers) is added, catches up,
// takes leadership, and a founding node is removed; the cluster serves throughout.
TEST(LatchdRaftOps, AddAJoiningNodeAndRemoveAnother) {
  Cluster c;
  std::string error;
  ASSERT_TRUE(c.Start(&error)) << error;
  const int leader = c.WaitLeader();
  ASSERT_NE(leader, -1) << c.Logs();
  const int lp = c.port(leader);
  ASSERT_EQ(Cmd(lp, {"SET", "lock:a", "owner-1", "NX", "PX", "60000"}), "+OK\r\n");
  for (int i = 0; i < 50; ++i) {
    ASSERT_EQ(Cmd(lp, {"SET", "k" + std::to_string(i), "v"}), "+OK\r\n");
  }
  const int raft4 = FreePort(), client4 = FreePort();
  const std::string dir4 = (c.dir() / "node4").string();
  std::filesystem::create_directories(dir4);
  const std::string raft_addr4 = "127.0.0.1:" + std::to_string(raft4);
  ServerProcess node4(
      "latchd node 4",
      {LATCHD_PATH, "--port", std::to_string(client4), "--bind", "127.0.0.1", "--raft-id", "4",
       "--raft-peers", c.peers(), "--raft-addr", raft_addr4, "--raft-dir", dir4},
      client4);
  ASSERT_TRUE(node4.ok()) << node4.error();
  // Before it is added it knows no leader and bootstrapped nothing.
  EXPECT_EQ(Cmd(client4, {"GET", "lock:a"}), kRaftOpsTryAgain);
  EXPECT_EQ(RaftStatus(client4)["raft_members"], "0");
  EXPECT_EQ(Cmd(lp, {"RAFT", "ADD", "4", raft_addr4 + ":" + std::to_string(client4)}), "+OK\r\n")
      << c.Logs() << node4.Log();
  // (RAFT STATUS shows the state after the leader's loop iteration that answered.)
  std::map<std::string, std::string> lead;
  EXPECT_TRUE(Eventually([&] {
    lead = RaftStatus(lp);
    return lead["member3"].find("id=4,address=" + raft_addr4 + ",role=voter") == 0;
  })) << lead["member3"];
  EXPECT_EQ(lead["raft_members"], "4");
  // It catches up: its applied index reaches the leader's commit index.
  EXPECT_TRUE(Eventually(
      [&] {
        return RaftNumber(RaftStatus(client4), "raft_applied_index") >= RaftNumber(lead, "raft_commit_index");
      },
      milliseconds(10000)))
      << node4.Log();
  // Leadership moves to it; it holds the lock and the data.
  ASSERT_EQ(Cmd(lp, {"RAFT", "TRANSFER", "4"}), "+OK\r\n") << c.Logs() << node4.Log();
  EXPECT_TRUE(Eventually([&] { return RaftStatus(client4)["raft_serving"] == "1"; }, kElection));
  EXPECT_EQ(Cmd(client4, {"GET", "lock:a"}), Bulk("owner-1"));
  EXPECT_EQ(Cmd(client4, {"GET", "k49"}), Bulk("v"));
  EXPECT_EQ(Cmd(client4, {"SET", "lock:a", "owner-2", "NX", "PX", "60000"}), "$-1\r\n");
  // A founding node is removed (from the new leader); the other three go on.
  const int removed = Other(leader);
  EXPECT_EQ(Cmd(client4, {"RAFT", "REMOVE", std::to_string(removed + 1)}), "+OK\r\n")
      << node4.Log();
  EXPECT_TRUE(Eventually([&] { return RaftStatus(client4)["raft_members"] == "3"; }));
  c.Kill9(removed);
  EXPECT_EQ(Cmd(client4, {"SET", "after", "remove"}), "+OK\r\n");
  EXPECT_EQ(Cmd(client4, {"GET", "after"}), Bulk("remove"));
  // The old leader follows node 4 and has the write.
  EXPECT_TRUE(Eventually([&] {
    const auto f = RaftStatus(lp);
    return f.count("raft_leader_id") && f.at("raft_leader_id") == "4" &&
           f.at("raft_members") == "3";
  }));
}

// A node started on another cluster's raft-dir stops before it changes anything in it.
TEST(LatchdRaftOps, RaftDirOfAnotherClusterStopsStartUp) {
  Cluster b;
  std::string error;
  ASSERT_TRUE(b.Start(&error)) << error;
  ASSERT_NE(b.WaitLeader(), -1) << b.Logs();
  const int leader = b.WaitLeader();
  ASSERT_EQ(Cmd(b.port(leader), {"SET", "k", "v"}), "+OK\r\n");
  b.Kill9(0);
  const std::filesystem::path dir = b.dir() / "node1";
  // Every file's name and a digest of its bytes (libraft preallocates 8 MiB segments: a
  // failure message must not print them).
  auto snapshot = [&] {
    std::map<std::string, std::size_t> files;
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
      std::ifstream in(e.path(), std::ios::binary);
      files[e.path().filename().string()] = std::hash<std::string>{}(
          std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()));
    }
    return files;
  };
  const auto before = snapshot();
  ASSERT_TRUE(before.count("latch-cluster")) << "no identity file";
  // Cluster A: the same ids, other addresses.
  const int a1 = FreePort(), a2 = FreePort(), a3 = FreePort(), client = FreePort();
  const std::string peers_a = "1=127.0.0.1:" + std::to_string(a1) + ":" + std::to_string(client) +
                              " 2=127.0.0.1:" + std::to_string(a2) + ":" +
                              std::to_string(FreePort()) + " 3=127.0.0.1:" + std::to_string(a3) +
                              ":" + std::to_string(FreePort());
  const auto [out, status] = RunShellCommand(
      std::string(LATCHD_PATH) + " --port " + std::to_string(client) +
      " --bind 127.0.0.1 --raft-id 1 --raft-peers '" + peers_a + "' --raft-dir " + dir.string());
  EXPECT_EQ(status, 1) << out;
  EXPECT_NE(out.find("raft-dir '" + dir.string() + "' belongs to another cluster"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("nothing was changed"), std::string::npos) << out;
  EXPECT_EQ(snapshot(), before);
  // Its own node starts on it again, and has the data.
  ASSERT_TRUE(b.StartNode(0, &error)) << error;
  EXPECT_NE(b.WaitLeader(), -1) << b.Logs();
  const int now = b.WaitLeader();
  EXPECT_EQ(Cmd(b.port(now), {"GET", "k"}), Bulk("v"));
}

}  // namespace
}  // namespace latch::test
