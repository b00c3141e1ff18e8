// Follower forwarding (docs/CLUSTER.md, "Forwarding"), over three latchd processes on
// loopback: a client of a follower gets the leader's replies to what needs the leader (writes,
// reads, scripts, transactions, blocking lock waits, Pub/Sub), with the session state it set
// on the follower before (SELECT, AUTH, HELLO 3, CLIENT SETNAME); and when the leader dies,
// the relayed client's connection is closed, as after a Redis failover. Every wait is a
// condition with a deadline.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "cluster/latchd_cluster.h"
#include "support/eventually.h"
#include "support/raw_connection.h"

namespace latch::test {
namespace {

using std::chrono::milliseconds;

constexpr char kCompareAndDelete[] =
    "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) "
    "else return 0 end";

struct Roles {
  int leader = -1, follower = -1, other = -1;  // `other`: the second follower
};

Roles StartCluster(Cluster& c) {
  std::string error;
  EXPECT_TRUE(c.Start(&error)) << error;
  Roles r;
  r.leader = c.WaitLeader();
  EXPECT_NE(r.leader, -1) << "no leader within " << kElection.count() << " ms\n" << c.Logs();
  r.follower = (r.leader + 1) % Cluster::kNodes;
  r.other = (r.leader + 2) % Cluster::kNodes;
  // The leader's election barrier may still be applying: a write answers once it serves.
  EXPECT_TRUE(Eventually(
      [&] {
        return Cmd(c.port(r.leader), {"SET", "ready", "1"}) == "+OK\r\n";
      },
      kElection))
      << c.Logs();
  return r;
}

TEST(LatchdClusterForward, FollowerRelaysLocksScriptsAndTransactionsToTheLeader) {
  Cluster c;
  const Roles r = StartCluster(c);
  ASSERT_NE(r.leader, -1);
  RawConnection conn(c.port(r.follower), milliseconds(10000));
  // Answered here, as a replica: nothing has switched the connection yet.
  EXPECT_TRUE(conn.Command("ROLE").starts_with("*5\r\n$5\r\nslave\r\n")) << c.Logs();
  EXPECT_EQ(conn.Command("SELECT", "3"), "+OK\r\n");
  EXPECT_EQ(conn.Command("SET", "lock:a", "owner-1", "NX", "PX", "30000"), "+OK\r\n") << c.Logs();
  EXPECT_EQ(conn.Command("SET", "lock:a", "owner-2", "NX", "PX", "30000"), "$-1\r\n");
  EXPECT_EQ(conn.Command("GET", "lock:a"), Bulk("owner-1"));
  // The session lives on the leader now: ROLE is its answer.
  EXPECT_TRUE(conn.Command("ROLE").starts_with("*3\r\n$6\r\nmaster\r\n"));
  // SELECT 3 was replayed on the leader before the SET.
  {
    RawConnection leader(c.port(r.leader), milliseconds(5000));
    EXPECT_EQ(leader.Command("GET", "lock:a"), "$-1\r\n");
    EXPECT_EQ(leader.Command("SELECT", "3"), "+OK\r\n");
    EXPECT_EQ(leader.Command("GET", "lock:a"), Bulk("owner-1"));
  }
  EXPECT_EQ(conn.Command("EVAL", kCompareAndDelete, "1", "lock:a", "owner-2"), ":0\r\n");
  EXPECT_EQ(conn.Command("EVAL", kCompareAndDelete, "1", "lock:a", "owner-1"), ":1\r\n");
  EXPECT_EQ(conn.Command("EXISTS", "lock:a"), ":0\r\n");
  EXPECT_EQ(conn.Command("MULTI"), "+OK\r\n");
  EXPECT_EQ(conn.Command("SET", "tx", "5"), "+QUEUED\r\n");
  EXPECT_EQ(conn.Command("INCR", "tx"), "+QUEUED\r\n");
  EXPECT_EQ(conn.Command("EXEC"), "*2\r\n+OK\r\n:6\r\n");

  // A pipeline of 1,000 commands through the relay, answered in order.
  std::string pipeline;
  for (int i = 0; i < 1000; ++i) pipeline += RawConnection::Encode({"INCR", "counter"});
  ASSERT_TRUE(conn.Send(pipeline));
  for (int i = 1; i <= 1000; ++i) {
    ASSERT_EQ(conn.ReadReply().value_or("(none)"), ":" + std::to_string(i) + "\r\n") << i;
  }

  // A blocking LOCK.ACQUIRE on the follower, woken by a release from a client of the other
  // follower: both relayed, the wait and the hand-off on the leader.
  RawConnection holder(c.port(r.other), milliseconds(10000));
  EXPECT_EQ(holder.Command("SELECT", "3"), "+OK\r\n");
  const std::string token = holder.Command("LOCK.ACQUIRE", "lk", "holder", "60000");
  ASSERT_EQ(token.substr(0, 1), ":") << token;
  ASSERT_TRUE(
      conn.Send(RawConnection::Encode({"LOCK.ACQUIRE", "lk", "waiter", "60000", "WAIT", "10000"})));
  // Parked on the leader.
  EXPECT_TRUE(Eventually(
      [&] {
        RawConnection leader(c.port(r.leader), milliseconds(5000));
        leader.Command("SELECT", "3");
        return leader.Command("LOCK.INFO", "lk").find("$7\r\nwaiters\r\n:1\r\n") !=
               std::string::npos;
      },
      milliseconds(10000)));
  EXPECT_EQ(holder.Command("LOCK.RELEASE", "lk", "holder"), ":1\r\n");
  const std::string granted = conn.ReadReply().value_or("(none)");
  EXPECT_EQ(granted.substr(0, 1), ":") << granted;
  EXPECT_GT(IntegerOf(granted), IntegerOf(token));
}

TEST(LatchdClusterForward, FollowerReplaysLoginNameAndProtocolThenRelaysPushes) {
  Cluster c;
  const Roles r = StartCluster(c);
  ASSERT_NE(r.leader, -1);
  // ACL users are each node's own configuration: the same user on every node.
  for (int i = 0; i < Cluster::kNodes; ++i) {
    ASSERT_EQ(Cmd(c.port(i), {"ACL", "SETUSER", "alice", "on", ">pw", "~*", "&*", "+@all"}),
              "+OK\r\n");
  }
  RawConnection conn(c.port(r.follower), milliseconds(10000));
  EXPECT_EQ(conn.Command("AUTH", "alice", "pw"), "+OK\r\n");
  EXPECT_EQ(conn.Command("CLIENT", "SETNAME", "relayed-one"), "+OK\r\n");
  EXPECT_EQ(conn.Command("HELLO", "3").substr(0, 1), "%");
  EXPECT_EQ(conn.Command("SUBSCRIBE", "ch"), ">3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n")
      << c.Logs();
  // The subscriber is the leader's, so a PUBLISH there (from any node) reaches it.
  EXPECT_EQ(Cmd(c.port(r.other), {"PUBLISH", "ch", "hello"}), ":1\r\n");
  EXPECT_EQ(conn.ReadReply().value_or("(none)"),
            ">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$5\r\nhello\r\n");
  // The leader sees the session as the client set it up on the follower.
  const std::string clients = Cmd(c.port(r.leader), {"CLIENT", "LIST"});
  const auto line_start = clients.find("name=relayed-one");
  ASSERT_NE(line_start, std::string::npos) << clients;
  const std::string line = clients.substr(line_start, clients.find('\n', line_start) - line_start);
  EXPECT_NE(line.find(" user=alice"), std::string::npos) << line;
  EXPECT_NE(line.find(" resp=3"), std::string::npos) << line;
  EXPECT_NE(line.find(" sub=1"), std::string::npos) << line;
}

// The largest omem= of the clients in a CLIENT LIST reply.
std::int64_t MostOutput(const std::string& list) {
  std::int64_t most = 0;
  for (auto at = list.find(" omem="); at != std::string::npos; at = list.find(" omem=", at + 1)) {
    most = std::max<std::int64_t>(most, std::stoll(list.substr(at + 6)));
  }
  return most;
}

// A relayed client that sends and does not read: the follower holds about 1 MB of its
// replies and stops reading the leader's, so they pile up on the leader, where that session's
// output limits apply; once they close it, the follower closes the client. Before the bound
// (the link read whatever came), the follower took all 64 MB and the leader held none.
TEST(LatchdClusterForward, SlowReaderIsBoundedOnTheFollowerAndClosedByTheLeadersLimit) {
  Cluster c;
  const Roles r = StartCluster(c);
  ASSERT_NE(r.leader, -1);
  ASSERT_EQ(Cmd(c.port(r.leader), {"SET", "big", std::string(1 << 20, 'x')}), "+OK\r\n");
  RawConnection conn(c.port(r.follower), kElection);
  std::string pipeline;
  for (int i = 0; i < 64; ++i) pipeline += RawConnection::Encode({"GET", "big"});
  ASSERT_TRUE(conn.Send(pipeline));
  EXPECT_TRUE(Eventually(
      [&] {
        return MostOutput(Cmd(c.port(r.leader), {"CLIENT", "LIST"})) > (16 << 20);
      },
      milliseconds(20000)))
      << Cmd(c.port(r.leader), {"CLIENT", "LIST"});
  EXPECT_LE(MostOutput(Cmd(c.port(r.follower), {"CLIENT", "LIST"})), 2 << 20);
  // The leader's soft limit (8 MB for a second) ends the session, and so the client's.
  ASSERT_EQ(
      Cmd(c.port(r.leader), {"CONFIG", "SET", "client-output-buffer-limit", "normal 0 8mb 1"}),
      "+OK\r\n");
  EXPECT_TRUE(
      Eventually([&] { return c.Log(r.leader).find("output buffer limits") != std::string::npos; },
                 milliseconds(10000)))
      << c.Logs();
  // The client gets what the follower holds, then the close.
  std::string trailing;
  EXPECT_TRUE(conn.WaitClosed(&trailing)) << c.Logs();
  EXPECT_LT(trailing.size(), std::size_t{64} << 20);
}

TEST(LatchdClusterForward, LeaderKillNineClosesTheRelayedClientWhichWritesAgainAfterFailover) {
  Cluster c;
  const Roles r = StartCluster(c);
  ASSERT_NE(r.leader, -1);
  RawConnection conn(c.port(r.follower), kElection);
  ASSERT_EQ(conn.Command("SET", "k", "before"), "+OK\r\n") << c.Logs();
  // A wait in flight on the leader when it dies: its client is closed, not left hanging.
  ASSERT_EQ(Cmd(c.port(r.leader), {"LOCK.ACQUIRE", "held", "someone", "60000"}).substr(0, 1), ":");
  ASSERT_TRUE(
      conn.Send(RawConnection::Encode({"LOCK.ACQUIRE", "held", "me", "60000", "WAIT", "0"})));
  ASSERT_TRUE(Eventually(
      [&] {
        return Cmd(c.port(r.leader), {"LOCK.INFO", "held"}).find("$7\r\nwaiters\r\n:1\r\n") !=
               std::string::npos;
      },
      milliseconds(10000)));
  c.Kill9(r.leader);
  std::string trailing;
  EXPECT_TRUE(conn.WaitClosed(&trailing)) << c.Logs();
  EXPECT_EQ(trailing, "");
  // A new connection to the same node writes once a new leader serves (-TRYAGAIN meanwhile,
  // or a closed connection if this node's view of the leader changes under it).
  std::string last;
  EXPECT_TRUE(Eventually(
      [&] {
        return (last = Cmd(c.port(r.follower), {"SET", "k", "after"})) == "+OK\r\n";
      },
      kElection))
      << last << "\n"
      << c.Logs();
  EXPECT_EQ(Cmd(c.port(r.other), {"GET", "k"}), Bulk("after"));
}

}  // namespace
}  // namespace latch::test
