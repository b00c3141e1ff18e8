// Members added and removed at run time, as every node tells clients of them
// (docs/CLUSTER.md, "Members and their client addresses"), over real latchd processes: a 4th
// node added with RAFT ADD and made leader with RAFT TRANSFER is what every founding node's
// SENTINEL names and forwards writes to, and is in its own ROLE and INFO with the others;
// a follower restarted after kill -9, also one that comes back from a snapshot after the log
// holding the member entry was truncated, still knows it; a member removed with RAFT REMOVE
// is in no node's answers any more.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cluster/latchd_cluster.h"
#include "cluster/raft_probe.h"
#include "support/eventually.h"
#include "support/raw_connection.h"

namespace latch::test {
namespace {

using std::chrono::milliseconds;

// A node started to join the cluster (raft-addr, an id not in raft-peers), not added yet.
struct Joiner {
  std::uint64_t id = 0;
  int raft_port = 0;
  int port = 0;
  std::unique_ptr<ServerProcess> process;
  std::string RaftAddSpec() const {
    return "127.0.0.1:" + std::to_string(raft_port) + ":" + std::to_string(port);
  }
};

Joiner StartJoiner(const Cluster& c, std::uint64_t id, const std::vector<std::string>& more = {}) {
  Joiner j;
  j.id = id;
  j.raft_port = FreePort();
  j.port = FreePort();
  const std::string dir = (c.dir() / ("node" + std::to_string(id))).string();
  std::filesystem::create_directories(dir);
  std::vector<std::string> argv{LATCHD_PATH,
                                "--port",
                                std::to_string(j.port),
                                "--bind",
                                "127.0.0.1",
                                "--raft-id",
                                std::to_string(id),
                                "--raft-peers",
                                c.peers(),
                                "--raft-addr",
                                "127.0.0.1:" + std::to_string(j.raft_port),
                                "--raft-dir",
                                dir};
  argv.insert(argv.end(), more.begin(), more.end());
  j.process =
      std::make_unique<ServerProcess>("latchd node " + std::to_string(id), std::move(argv), j.port);
  return j;
}

// A RAFT STATUS field ("" when absent).
std::string StatusField(int port, const std::string& field) { return RaftStatus(port)[field]; }
std::uint64_t StatusNumber(int port, const std::string& field) {
  return RaftNumber(RaftStatus(port), field);
}

std::string MasterAddrOf(int port) {
  return Cmd(port, {"SENTINEL", "get-master-addr-by-name", "latch"});
}
std::string AddrOf(int port) { return "*2\r\n" + Bulk("127.0.0.1") + Bulk(std::to_string(port)); }

// The bulk string that follows each occurrence of `before` in a raw RESP reply: the values of
// a field in SENTINEL's flat key/value arrays ("port"), or the port after each host in ROLE.
std::set<int> BulkAfter(const std::string& reply, const std::string& before) {
  std::set<int> out;
  const std::string key = "\r\n" + Bulk(before);
  for (std::size_t pos = reply.find(key); pos != std::string::npos; pos = reply.find(key, pos)) {
    pos += key.size();
    if (reply[pos] != '$') continue;  // a follower's ROLE: the leader's port is an integer
    const std::size_t value = reply.find("\r\n", pos) + 2;  // past "$N"
    out.insert(std::stoi(reply.substr(value, reply.find("\r\n", value) - value)));
  }
  return out;
}

// The ports of INFO replication's slaveN lines.
std::set<int> InfoSlavePorts(int port) {
  const std::string info = Cmd(port, {"INFO", "replication"});
  std::set<int> out;
  for (std::size_t pos = info.find(",port="); pos != std::string::npos;
       pos = info.find(",port=", pos + 1)) {
    out.insert(std::stoi(info.substr(pos + 6)));
  }
  return out;
}

// What node `port` tells clients of the other members: SENTINEL replicas and sentinels (the
// ports it lists), and, on the leader, ROLE's and INFO's replicas.
struct Listed {
  std::set<int> replicas, sentinels, role, info;
};
Listed ListedBy(int port) {
  Listed l;
  l.replicas = BulkAfter(Cmd(port, {"SENTINEL", "replicas", "latch"}), "port");
  l.sentinels = BulkAfter(Cmd(port, {"SENTINEL", "sentinels", "latch"}), "port");
  l.role = BulkAfter(Cmd(port, {"ROLE"}), "127.0.0.1");
  l.info = InfoSlavePorts(port);
  return l;
}
std::string Show(const std::set<int>& s) {
  std::string out;
  for (int p : s) out += std::to_string(p) + " ";
  return out;
}

// A 3-node cluster with node 4 added and leading. Node `old_leader` led before.
struct AddedLeader {
  Cluster c;
  Joiner four;
  int old_leader = -1;
  std::uint64_t member_entry_upto = 0;  // the leader's commit index once RAFT ADD answered
  explicit AddedLeader(const std::vector<std::string>& args) : c(args) {}
};

void AddAndLead(AddedLeader& a, const std::vector<std::string>& args) {
  std::string error;
  ASSERT_TRUE(a.c.Start(&error)) << error;
  a.old_leader = a.c.WaitLeader();
  ASSERT_NE(a.old_leader, -1) << a.c.Logs();
  const int lp = a.c.port(a.old_leader);
  a.four = StartJoiner(a.c, 4, args);
  ASSERT_TRUE(a.four.process->ok()) << a.four.process->error();
  ASSERT_EQ(Cmd(lp, {"RAFT", "ADD", "4", a.four.RaftAddSpec()}), "+OK\r\n") << a.c.Logs();
  a.member_entry_upto = StatusNumber(lp, "raft_commit_index");
  ASSERT_TRUE(Eventually(
      [&] { return StatusNumber(a.four.port, "raft_applied_index") >= a.member_entry_upto; },
      milliseconds(10000)))
      << a.four.process->Log();
  ASSERT_EQ(Cmd(lp, {"RAFT", "TRANSFER", "4"}), "+OK\r\n") << a.c.Logs() << a.four.process->Log();
  ASSERT_TRUE(
      Eventually([&] { return StatusField(a.four.port, "raft_serving") == "1"; }, kElection))
      << a.four.process->Log();
}

// Node i names node 4 to Sentinel clients and forwards a write to it.
void FindsTheAddedLeader(AddedLeader& a, int i, const std::string& key) {
  SCOPED_TRACE("node " + std::to_string(i + 1));
  EXPECT_TRUE(Eventually([&] { return MasterAddrOf(a.c.port(i)) == AddrOf(a.four.port); }))
      << MasterAddrOf(a.c.port(i)) << a.c.Log(i);
  RawConnection conn(a.c.port(i), milliseconds(5000));
  EXPECT_EQ(conn.Command("SET", key, "via-" + std::to_string(i + 1)), "+OK\r\n") << a.c.Log(i);
  EXPECT_EQ(Cmd(a.four.port, {"GET", key}), Bulk("via-" + std::to_string(i + 1)));
}

TEST(LatchdClusterMembers, AddedLeaderIsFoundByEveryNodeAndARemovedOneByNone) {
  AddedLeader a({});
  AddAndLead(a, {});
  if (HasFatalFailure()) return;
  for (int i = 0; i < a.c.size(); ++i) FindsTheAddedLeader(a, i, "k" + std::to_string(i));
  EXPECT_EQ(MasterAddrOf(a.four.port), AddrOf(a.four.port));
  // The leader lists the three founding nodes as its replicas, once it heard from each.
  const std::set<int> founding{a.c.port(0), a.c.port(1), a.c.port(2)};
  Listed l;
  EXPECT_TRUE(Eventually([&] {
    l = ListedBy(a.four.port);
    return l.role == founding && l.info == founding && l.replicas == founding &&
           l.sentinels == founding;
  })) << "role "
      << Show(l.role) << "info " << Show(l.info) << "replicas " << Show(l.replicas);
  // Every follower lists node 4 among the sentinels (ioredis learns the nodes there).
  for (int i = 0; i < a.c.size(); ++i) {
    EXPECT_EQ(ListedBy(a.c.port(i)).sentinels.count(a.four.port), 1u) << i;
  }

  // A follower restarted after kill -9 knows node 4 again (its log holds the member entry).
  const int restarted = a.old_leader;
  a.c.Kill9(restarted);
  std::string error;
  ASSERT_TRUE(a.c.StartNode(restarted, &error)) << error;
  FindsTheAddedLeader(a, restarted, "after-restart");

  // A founding follower removed: no node lists it any more, and the leader's replicas are
  // the two left.
  const int removed = (restarted + 1) % a.c.size();
  const int kept = (restarted + 2) % a.c.size();
  ASSERT_EQ(Cmd(a.four.port, {"RAFT", "REMOVE", std::to_string(removed + 1)}), "+OK\r\n")
      << a.four.process->Log();
  const std::set<int> left{a.c.port(restarted), a.c.port(kept)};
  EXPECT_TRUE(Eventually([&] {
    l = ListedBy(a.four.port);
    return l.role == left && l.info == left && l.replicas == left && l.sentinels == left;
  })) << "role "
      << Show(l.role) << "info " << Show(l.info) << "replicas " << Show(l.replicas);
  for (const int i : {restarted, kept}) {
    EXPECT_TRUE(Eventually([&] {
      l = ListedBy(a.c.port(i));
      const std::set<int> others{a.four.port, a.c.port(i == kept ? restarted : kept)};
      return l.sentinels == others && l.replicas.count(a.c.port(removed)) == 0;
    })) << "node "
        << i + 1 << " sentinels " << Show(l.sentinels) << "replicas " << Show(l.replicas);
  }
  a.c.Kill9(removed);
  FindsTheAddedLeader(a, kept, "after-remove");
}

const std::vector<std::string> kMembersSmallSnapshots{"--raft-snapshot-threshold", "64",
                                                      "--raft-snapshot-trailing", "32"};

// The first entry of node `dir`'s oldest closed segment ("FIRST-LAST"; 0 when there is none)
// and whether it holds a snapshot: libraft's file names.
std::uint64_t OldestSegment(const std::filesystem::path& dir, bool* snapshot) {
  std::uint64_t first = 0;
  *snapshot = false;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.starts_with("snapshot-")) *snapshot = true;
    const std::size_t dash = name.find('-');
    if (dash == std::string::npos || dash == 0 ||
        !std::all_of(name.begin(), name.begin() + static_cast<std::ptrdiff_t>(dash), ::isdigit)) {
      continue;
    }
    const std::uint64_t n = std::stoull(name.substr(0, dash));
    if (first == 0 || n < first) first = n;
  }
  return first;
}

// The member entry is gone from a follower's log (truncated behind its snapshot): restarted,
// the follower knows node 4 from the snapshot alone.
TEST(LatchdClusterMembers, AddedLeaderIsKnownFromASnapshotOnceTheLogIsTruncated) {
  AddedLeader a(kMembersSmallSnapshots);
  AddAndLead(a, kMembersSmallSnapshots);
  if (HasFatalFailure()) return;
  const int follower = (a.old_leader + 1) % a.c.size();
  // 32 KiB values: libraft's 8 MiB segments close every ~250 entries. Written until the
  // follower's oldest closed segment starts past the member entry (bounded).
  RawConnection conn(a.four.port, milliseconds(10000));
  const std::string value(32 * 1024, 'v');
  bool snapshot = false;
  int written = 0;
  while (written < 3000 &&
         !(OldestSegment(a.c.RaftDir(follower), &snapshot) > a.member_entry_upto && snapshot)) {
    for (int n = 0; n < 50; ++n, ++written) {
      ASSERT_EQ(conn.CommandArgs({"SET", "fill:" + std::to_string(written % 200), value}),
                "+OK\r\n");
    }
  }
  ASSERT_GT(OldestSegment(a.c.RaftDir(follower), &snapshot), a.member_entry_upto)
      << written << " writes";
  ASSERT_TRUE(snapshot);
  a.c.Kill9(follower);
  std::string error;
  ASSERT_TRUE(a.c.StartNode(follower, &error)) << error;
  EXPECT_NE(a.c.Log(follower).find("restored a snapshot"), std::string::npos) << a.c.Log(follower);
  FindsTheAddedLeader(a, follower, "after-snapshot");
}

}  // namespace
}  // namespace latch::test
