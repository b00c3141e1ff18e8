// Raft snapshots of three latchd processes (docs/CLUSTER.md, "Snapshots"), with a small
// raft-snapshot-threshold: the log is truncated behind them, a node restarted after kill -9
// comes back from its snapshot with every acknowledged key, lock and token, and a follower
// that was down while the log moved past it catches up through the leader's snapshot.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "cluster/latchd_cluster.h"
#include "support/eventually.h"
#include "support/raw_connection.h"

namespace latch::test {
namespace {

using std::chrono::milliseconds;
using SteadyClock = std::chrono::steady_clock;

const std::vector<std::string> kSmallSnapshots{"--raft-snapshot-threshold", "64",
                                               "--raft-snapshot-trailing", "32"};
constexpr std::int64_t kTtl = 600000;
// What a TTL may gain on its way: the clock-rate margin (1 ms per second) once in the entry
// and once in each snapshot it passed through.
constexpr std::int64_t kTtlSlack = 3 * (kTtl / 1000) + 3;

// Values of about 12 KiB fill several of libraft's 8 MiB segments in 1,800 entries.
std::string ValueOf(int n, std::size_t size = 12 * 1024) {
  return "value-" + std::to_string(n) + std::string(size, 'v');
}

// The field `name` of an INFO reply ("" when absent).
std::string InfoValue(const std::string& reply, const std::string& name) {
  const std::string at = "\r\n" + name + ":";
  const std::size_t pos = reply.find(at);
  if (pos == std::string::npos) return "";
  const std::size_t from = pos + at.size();
  return reply.substr(from, reply.find("\r\n", from) - from);
}

struct RaftFiles {
  int snapshots = 0;
  int closed_segments = 0;
  std::uint64_t first_index = UINT64_MAX;  // of the oldest closed segment
};

// libraft's files in a node's raft-dir: "snapshot-TERM-INDEX-TIME" (+ ".meta"), closed
// segments "FIRST-LAST", open segments "open-N".
RaftFiles ListRaftDir(const std::filesystem::path& dir) {
  RaftFiles f;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.starts_with("snapshot-") && !name.ends_with(".meta")) ++f.snapshots;
    const std::size_t dash = name.find('-');
    if (dash != std::string::npos && dash > 0 &&
        std::all_of(name.begin(), name.begin() + static_cast<std::ptrdiff_t>(dash), ::isdigit)) {
      ++f.closed_segments;
      f.first_index = std::min<std::uint64_t>(f.first_index, std::stoull(name.substr(0, dash)));
    }
  }
  return f;
}

// A snapshot is on disk and the segment holding entry 1 is gone: the log was truncated.
bool Truncated(const std::filesystem::path& dir) {
  const RaftFiles f = ListRaftDir(dir);
  return f.snapshots > 0 && f.first_index > 1;
}

std::string Listing(const std::filesystem::path& dir) {
  std::string out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    out += e.path().filename().string() + " " + std::to_string(e.file_size(ec)) + "\n";
  }
  return out;
}

TEST(LatchdClusterSnapshot, RestartComesBackFromItsSnapshotWithEveryAcknowledgedKey) {
  Cluster c(kSmallSnapshots);
  std::string error;
  ASSERT_TRUE(c.Start(&error)) << error;
  const int leader = c.WaitLeader();
  ASSERT_NE(leader, -1) << "no leader within " << kElection.count() << " ms\n" << c.Logs();

  // One command at a time: each is an entry of its own, ~2,000 entries.
  RawConnection conn(c.port(leader), milliseconds(10000));
  const auto first_sent = SteadyClock::now();
  constexpr int kKeys = 1800;
  for (int n = 0; n < kKeys; ++n) {
    std::vector<std::string> set{"SET", "key:" + std::to_string(n), ValueOf(n)};
    if (n % 3 == 0) set.insert(set.end(), {"PX", std::to_string(kTtl)});
    ASSERT_EQ(conn.CommandArgs(set), "+OK\r\n") << n;
  }
  constexpr int kLocks = 100;
  std::vector<std::int64_t> tokens;
  for (int n = 0; n < kLocks; ++n) {
    const std::string reply =
        conn.CommandArgs({"LOCK.ACQUIRE", "lock:" + std::to_string(n), "owner-" + std::to_string(n),
                          std::to_string(kTtl)});
    ASSERT_GT(IntegerOf(reply), 0) << reply;
    tokens.push_back(IntegerOf(reply));
  }
  ASSERT_EQ(conn.CommandArgs({"HSET", "hash", "f1", "v1", "f2", "v2"}), ":2\r\n");
  ASSERT_EQ(conn.CommandArgs({"SELECT", "3"}), "+OK\r\n");
  ASSERT_EQ(conn.CommandArgs({"SET", "in-db3", "three"}), "+OK\r\n");
  conn.Close();

  for (int i = 0; i < Cluster::kNodes; ++i) {
    EXPECT_TRUE(Eventually([&] { return Truncated(c.RaftDir(i)); }, milliseconds(30000)))
        << "node " << i + 1 << ": " << ListRaftDir(c.RaftDir(i)).snapshots << " snapshot(s), "
        << "oldest closed segment from " << ListRaftDir(c.RaftDir(i)).first_index << "\n"
        << Listing(c.RaftDir(i)) << c.Log(i);
    // ~22 MiB were written in 8 MiB segments; what is left is the tail behind the snapshot.
    EXPECT_LE(ListRaftDir(c.RaftDir(i)).closed_segments, 2) << "node " << i + 1;
  }

  // Every node killed and restarted: each loads its snapshot, then the log after it.
  for (int i = 0; i < Cluster::kNodes; ++i) c.Kill9(i);
  for (int i = 0; i < Cluster::kNodes; ++i) ASSERT_TRUE(c.StartNode(i, &error)) << error;
  const int next = c.WaitLeader();
  ASSERT_NE(next, -1) << "no leader after the restart\n" << c.Logs();
  for (int i = 0; i < Cluster::kNodes; ++i) {
    EXPECT_NE(c.Log(i).find("restored a snapshot"), std::string::npos) << c.Log(i);
  }

  RawConnection check(c.port(next), milliseconds(10000));
  EXPECT_EQ(check.CommandArgs({"DBSIZE"}), ":" + std::to_string(kKeys + kLocks + 1) + "\r\n");
  for (int n = 0; n < kKeys; ++n) {
    const std::string key = "key:" + std::to_string(n);
    ASSERT_EQ(check.CommandArgs({"GET", key}), Bulk(ValueOf(n))) << key;
    const std::int64_t pttl = IntegerOf(check.CommandArgs({"PTTL", key}));
    if (n % 3 != 0) {
      EXPECT_EQ(pttl, -1) << key;
      continue;
    }
    // Never shorter than what was left of the TTL granted, and not much longer than granted.
    const auto since =
        std::chrono::duration_cast<milliseconds>(SteadyClock::now() - first_sent).count();
    EXPECT_GT(pttl, kTtl - since) << key;
    EXPECT_LE(pttl, kTtl + kTtlSlack) << key;
  }
  std::int64_t highest = 0;
  for (int n = 0; n < kLocks; ++n) {
    const std::string info = check.CommandArgs({"LOCK.INFO", "lock:" + std::to_string(n)});
    EXPECT_NE(info.find(Bulk("owner-" + std::to_string(n))), std::string::npos) << info;
    EXPECT_NE(info.find(":" + std::to_string(tokens[n]) + "\r\n"), std::string::npos) << info;
    highest = std::max(highest, tokens[n]);
  }
  EXPECT_EQ(check.CommandArgs({"HGET", "hash", "f2"}), Bulk("v2"));
  EXPECT_EQ(check.CommandArgs({"SELECT", "3"}), "+OK\r\n");
  EXPECT_EQ(check.CommandArgs({"GET", "in-db3"}), Bulk("three"));
  // Fencing: the next grant is above every token issued before the snapshot and restart.
  const std::int64_t token =
      IntegerOf(check.CommandArgs({"LOCK.ACQUIRE", "lock:new", "o", "1000"}));
  EXPECT_GT(token, highest);
}

// A follower killed while the leader writes far more than threshold + trailing entries comes
// back behind the leader's log: it installs the leader's snapshot, then holds the same
// keyspace (values, TTLs, a SWAPDB made while it was down), as it shows once it leads.
TEST(LatchdClusterSnapshot, FollowerDownWhileTheLogMovesOnCatchesUpFromTheLeadersSnapshot) {
  Cluster c(kSmallSnapshots);
  std::string error;
  ASSERT_TRUE(c.Start(&error)) << error;
  const int leader = c.WaitLeader();
  ASSERT_NE(leader, -1) << "no leader within " << kElection.count() << " ms\n" << c.Logs();
  const int down = (leader + 1) % Cluster::kNodes;
  const int other = (leader + 2) % Cluster::kNodes;

  std::map<std::string, std::string> db0, db1;  // what the cluster acknowledged
  RawConnection conn(c.port(leader), milliseconds(10000));
  for (int n = 0; n < 20; ++n) {  // below the threshold: the follower has no snapshot of its own
    ASSERT_EQ(conn.CommandArgs({"SET", "early:" + std::to_string(n), "e"}), "+OK\r\n");
    db0["early:" + std::to_string(n)] = "e";
  }
  c.Kill9(down);
  const auto first_sent = SteadyClock::now();
  for (int n = 0; n < 600; ++n) {
    const std::string key = "key:" + std::to_string(n % 400);  // some written twice
    ASSERT_EQ(conn.CommandArgs({"SET", key, ValueOf(n, 100), "PX", std::to_string(kTtl)}),
              "+OK\r\n");
    db0[key] = ValueOf(n, 100);
    if (n == 300) {
      ASSERT_EQ(conn.CommandArgs({"DEL", "early:0", "early:1"}), ":2\r\n");
      db0.erase("early:0");
      db0.erase("early:1");
      ASSERT_EQ(conn.CommandArgs({"SWAPDB", "0", "1"}), "+OK\r\n");
      std::swap(db0, db1);
      ASSERT_EQ(conn.CommandArgs({"SET", "after-swap", "x"}), "+OK\r\n");
      db0["after-swap"] = "x";
    }
  }
  conn.Close();
  // The leader keeps 32 entries behind its last snapshot: not the ~580 the follower lacks.
  ASSERT_TRUE(
      Eventually([&] { return ListRaftDir(c.RaftDir(leader)).snapshots > 0; }, milliseconds(30000)))
      << c.Log(leader);

  ASSERT_TRUE(c.StartNode(down, &error)) << error;
  // Caught up: the three nodes applied the same index (the leader proposes nothing more once
  // the writes' lease renewals are over).
  auto offset = [&](int i, const char* field) {
    return InfoValue(Cmd(c.port(i), {"INFO", "replication"}), field);
  };
  EXPECT_TRUE(Eventually(
      [&] {
        const std::string at = offset(leader, "master_repl_offset");
        return !at.empty() && offset(down, "slave_repl_offset") == at &&
               offset(other, "slave_repl_offset") == at;
      },
      milliseconds(60000)))
      << c.Logs();
  EXPECT_NE(c.Log(down).find("restored a snapshot"), std::string::npos) << c.Log(down);
  EXPECT_GT(ListRaftDir(c.RaftDir(down)).snapshots, 0);
  EXPECT_EQ(InfoValue(Cmd(c.port(down), {"INFO", "keyspace"}), "db0"),
            InfoValue(Cmd(c.port(leader), {"INFO", "keyspace"}), "db0"));

  // The caught-up node leads: the two others come back with a long election timeout, so it is
  // the one to start an election (its log is as long as theirs: nothing was written since).
  c.Kill9(leader);
  c.Kill9(other);
  for (int i : {leader, other}) {
    ASSERT_TRUE(c.StartNode(i, &error, {"--raft-election-timeout", "30000"})) << error;
  }
  ASSERT_EQ(c.WaitLeader(), down) << c.Logs();
  RawConnection check(c.port(down), milliseconds(10000));
  EXPECT_EQ(check.CommandArgs({"DBSIZE"}), ":" + std::to_string(db0.size()) + "\r\n");
  for (const auto& [key, value] : db0) {
    ASSERT_EQ(check.CommandArgs({"GET", key}), Bulk(value)) << key;
    if (!key.starts_with("key:")) continue;
    const std::int64_t pttl = IntegerOf(check.CommandArgs({"PTTL", key}));
    const auto since =
        std::chrono::duration_cast<milliseconds>(SteadyClock::now() - first_sent).count();
    EXPECT_GT(pttl, kTtl - since) << key;
    EXPECT_LE(pttl, kTtl + kTtlSlack) << key;
  }
  EXPECT_EQ(check.CommandArgs({"SELECT", "1"}), "+OK\r\n");
  EXPECT_EQ(check.CommandArgs({"DBSIZE"}), ":" + std::to_string(db1.size()) + "\r\n");
  for (const auto& [key, value] : db1) ASSERT_EQ(check.CommandArgs({"GET", key}), Bulk(value));
}

// Bytes that are not a whole latchd snapshot (here: a node's snapshot data replaced on disk)
// are refused before the keyspace is touched; at start-up the node then stops with the reason
// instead of serving a keyspace it could not rebuild.
TEST(LatchdClusterSnapshot, UnreadableSnapshotStopsStartUpWithTheReason) {
  Cluster c(kSmallSnapshots);
  std::string error;
  ASSERT_TRUE(c.Start(&error)) << error;
  const int leader = c.WaitLeader();
  ASSERT_NE(leader, -1) << "no leader within " << kElection.count() << " ms\n" << c.Logs();
  RawConnection conn(c.port(leader), milliseconds(10000));
  for (int n = 0; n < 100; ++n) {
    ASSERT_EQ(conn.CommandArgs({"SET", "key:" + std::to_string(n), "v"}), "+OK\r\n");
  }
  const int follower = (leader + 1) % Cluster::kNodes;
  ASSERT_TRUE(Eventually([&] { return ListRaftDir(c.RaftDir(follower)).snapshots > 0; },
                         milliseconds(30000)))
      << c.Log(follower);
  c.Kill9(follower);
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(c.RaftDir(follower), ec)) {
    const std::string name = e.path().filename().string();
    if (name.starts_with("snapshot-") && !name.ends_with(".meta")) {
      std::ofstream(e.path(), std::ios::trunc) << "*1\r\n$4\r\nPING\r\n";
    }
  }
  EXPECT_FALSE(c.StartNode(follower, &error));
  EXPECT_NE(error.find("is not a whole latchd snapshot"), std::string::npos) << error;
}

}  // namespace
}  // namespace latch::test
