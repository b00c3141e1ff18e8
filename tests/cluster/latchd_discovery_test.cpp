// How clients find the leader of a three-node latchd cluster (docs/CLUSTER.md, "Clients and
// leader discovery"), over real processes on loopback: -TRYAGAIN while no leader is known,
// a follower relaying what needs the leader once one is, and ROLE, INFO replication and SENTINEL
// naming the leader on every node, before and after kill -9 of the leader.
#include <gtest/gtest.h>
#include <signal.h>

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/latchd_cluster.h"

namespace latch::test {
namespace {

constexpr std::string_view kTryAgain = "-TRYAGAIN no Raft leader is known, retry later\r\n";

// Sentinel's instance lists (RESP2): an array of flat field/value arrays of bulk strings.
using Entry = std::map<std::string, std::string>;

bool ReadLine(std::string_view s, std::size_t* pos, std::string* line) {
  const std::size_t end = s.find("\r\n", *pos);
  if (end == std::string_view::npos) return false;
  *line = std::string(s.substr(*pos, end - *pos));
  *pos = end + 2;
  return true;
}

bool ReadBulk(std::string_view s, std::size_t* pos, std::string* out) {
  std::string header;
  if (!ReadLine(s, pos, &header) || header.empty() || header[0] != '$') return false;
  const std::size_t n = std::stoul(header.substr(1));
  if (*pos + n + 2 > s.size()) return false;
  *out = std::string(s.substr(*pos, n));
  *pos += n + 2;
  return true;
}

std::size_t ReadArrayHeader(std::string_view s, std::size_t* pos) {
  std::string header;
  if (!ReadLine(s, pos, &header) || header.size() < 2 || header[0] != '*') return 0;
  return std::stoul(header.substr(1));
}

bool ReadEntry(std::string_view s, std::size_t* pos, Entry* e) {
  const std::size_t n = ReadArrayHeader(s, pos);
  if (n == 0 || n % 2 != 0) return false;
  for (std::size_t i = 0; i < n; i += 2) {
    std::string field, value;
    if (!ReadBulk(s, pos, &field) || !ReadBulk(s, pos, &value)) return false;
    (*e)[field] = value;
  }
  return true;
}

// The entries of SENTINEL masters/replicas/sentinels; empty (and ADD_FAILURE) if malformed.
std::vector<Entry> Entries(const std::string& reply) {
  std::size_t pos = 0;
  std::vector<Entry> out;
  if (reply == "*0\r\n") return out;
  const std::size_t n = ReadArrayHeader(reply, &pos);
  for (std::size_t i = 0; i < n; ++i) {
    Entry e;
    if (!ReadEntry(reply, &pos, &e)) {
      ADD_FAILURE() << "malformed reply: " << reply;
      return {};
    }
    out.push_back(std::move(e));
  }
  if (n == 0 || pos != reply.size()) ADD_FAILURE() << "malformed reply: " << reply;
  return out;
}

Entry OneEntry(const std::string& reply) {
  std::size_t pos = 0;
  Entry e;
  if (!ReadEntry(reply, &pos, &e) || pos != reply.size()) ADD_FAILURE() << reply;
  return e;
}

// The "name:value" lines of an INFO reply.
std::map<std::string, std::string> InfoFields(const std::string& reply) {
  std::map<std::string, std::string> out;
  std::size_t pos = reply.find("\r\n");
  while (pos != std::string::npos && pos + 2 < reply.size()) {
    const std::size_t end = reply.find("\r\n", pos + 2);
    const std::string line = reply.substr(pos + 2, end - pos - 2);
    if (const std::size_t colon = line.find(':'); colon != std::string::npos) {
      out[line.substr(0, colon)] = line.substr(colon + 1);
    }
    pos = end;
  }
  return out;
}

std::string MasterAddr(int port, const std::string& name = "latch") {
  return Cmd(port, {"SENTINEL", "get-master-addr-by-name", name});
}
std::string AddrReply(int port) {
  return "*2\r\n" + Bulk("127.0.0.1") + Bulk(std::to_string(port));
}

// The fast path of Dispatch (a command the worker ran last, an ordinary client) must not run
// a follower's writes locally: before the fix, the second SET on one connection ran on the
// follower, its entry failed as "not the leader" and the follower stopped. Now the first SET
// switches the connection to the leader, and every later command runs there.
TEST(LatchdClusterDiscovery, FollowerRelaysEveryWriteOnOneConnectionAndStaysUp) {
  Cluster c;
  std::string error;
  ASSERT_TRUE(c.Start(&error)) << error;
  const int leader = c.WaitLeader();
  ASSERT_NE(leader, -1) << "no leader within " << kElection.count() << " ms\n" << c.Logs();
  const int follower = (leader + 1) % Cluster::kNodes;
  RawConnection conn(c.port(follower), kElection);
  // The leader's election barrier may still be applying (-TRYAGAIN from it, relayed).
  ASSERT_TRUE(Eventually([&] { return conn.Command("SET", "k", "start") == "+OK\r\n"; }, kElection))
      << c.Logs();
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(conn.Command("SET", "k", std::to_string(i)), "+OK\r\n") << i;
    EXPECT_EQ(conn.Command("DEL", "k"), ":1\r\n") << i;
  }
  EXPECT_EQ(conn.Command("PING"), "+PONG\r\n") << c.Log(follower);
  EXPECT_EQ(Cmd(c.port(leader), {"GET", "k"}), "$-1\r\n");
  // A connection that asks nothing of the leader is answered here, as a replica.
  EXPECT_TRUE(Cmd(c.port(follower), {"ROLE"}).starts_with("*5\r\n$5\r\nslave\r\n"));
  EXPECT_EQ(c.Leader(), leader) << c.Logs();
}

// One node of three alone has no leader: what touches data gets -TRYAGAIN, the rest answers.
// Once a second node is up, a leader is elected and the follower relays reads and writes to
// it (docs/CLUSTER.md, "Forwarding").
TEST(LatchdClusterDiscovery, TryAgainWhileNoLeaderIsKnownRelayedOnceOneIs) {
  Cluster c;
  std::string error;
  ASSERT_TRUE(c.StartNode(0, &error)) << error;
  const int p = c.port(0);
  EXPECT_EQ(Cmd(p, {"GET", "k"}), kTryAgain);
  EXPECT_EQ(Cmd(p, {"SET", "k", "v", "NX", "PX", "1000"}), kTryAgain);
  EXPECT_EQ(Cmd(p, {"EXISTS", "k"}), kTryAgain);
  EXPECT_EQ(Cmd(p, {"EVAL", "return redis.call('GET', KEYS[1])", "1", "k"}).substr(0, 10),
            "-TRYAGAIN ");
  {
    RawConnection conn(p, std::chrono::milliseconds(5000));
    EXPECT_EQ(conn.Command("MULTI"), "+OK\r\n");
    EXPECT_EQ(conn.Command("GET", "k"), kTryAgain);
    EXPECT_EQ(conn.Command("EXEC"),
              "-EXECABORT Transaction discarded because of previous errors.\r\n");
    // Repeated on one connection (Dispatch's fast path), still refused.
    EXPECT_EQ(conn.Command("GET", "k"), kTryAgain);
    EXPECT_EQ(conn.Command("GET", "k"), kTryAgain);
  }
  EXPECT_EQ(Cmd(p, {"PING"}), "+PONG\r\n");
  // The offset is the applied index: 1 after the bootstrap configuration entry.
  EXPECT_EQ(Cmd(p, {"ROLE"}), "*5\r\n$5\r\nslave\r\n$1\r\n?\r\n:0\r\n$7\r\nconnect\r\n:1\r\n");
  EXPECT_EQ(MasterAddr(p), "*-1\r\n");
  const Entry master = OneEntry(Cmd(p, {"SENTINEL", "master", "latch"}));
  EXPECT_EQ(master.at("flags"), "master,s_down,o_down");
  EXPECT_EQ(master.at("num-other-sentinels"), "2");
  auto info = InfoFields(Cmd(p, {"INFO", "replication"}));
  EXPECT_EQ(info["role"], "slave");
  EXPECT_EQ(info["master_link_status"], "down");
  EXPECT_EQ(info["master_host"], "?");

  ASSERT_TRUE(c.StartNode(1, &error)) << error;
  const int leader = c.WaitLeader();
  ASSERT_NE(leader, -1) << "no leader within " << kElection.count() << " ms\n" << c.Logs();
  const int follower = 1 - leader;
  EXPECT_EQ(Cmd(c.port(leader), {"SET", "k", "v"}), "+OK\r\n");
  EXPECT_EQ(Cmd(c.port(follower), {"SET", "k", "w"}), "+OK\r\n");
  EXPECT_EQ(Cmd(c.port(follower), {"GET", "k"}), Bulk("w"));
  EXPECT_EQ(Cmd(c.port(leader), {"GET", "k"}), Bulk("w"));
  EXPECT_EQ(MasterAddr(c.port(follower)), AddrReply(c.port(leader)));
}

// Every node names the leader: ROLE, INFO replication (field names as redis-server 7.0.15
// prints them) and Sentinel's discovery commands (as Sentinel 7.0 names its fields).
TEST(LatchdClusterDiscovery, EveryNodeNamesTheLeaderInRoleInfoAndSentinel) {
  Cluster c;
  std::string error;
  ASSERT_TRUE(c.Start(&error)) << error;
  const int leader = c.WaitLeader();
  ASSERT_NE(leader, -1) << "no leader within " << kElection.count() << " ms\n" << c.Logs();
  ASSERT_EQ(Cmd(c.port(leader), {"SET", "k", "v"}), "+OK\r\n");
  const std::string lp = std::to_string(c.port(leader));

  // The leader lists both followers once it has heard from them, at its applied index.
  std::map<std::string, std::string> info;
  ASSERT_TRUE(Eventually([&] {
    info = InfoFields(Cmd(c.port(leader), {"INFO", "replication"}));
    return info["connected_slaves"] == "2" &&
           info["slave0"].find(",offset=" + info["master_repl_offset"] + ",") !=
               std::string::npos &&
           info["slave1"].find(",offset=" + info["master_repl_offset"] + ",") != std::string::npos;
  })) << Cmd(c.port(leader), {"INFO", "replication"});
  EXPECT_EQ(info["role"], "master");
  EXPECT_EQ(info["master_failover_state"], "no-failover");
  EXPECT_GE(std::stoll(info["master_repl_offset"]), 2);  // the election barrier and the SET
  for (const std::string slave : {"slave0", "slave1"}) {
    EXPECT_TRUE(info[slave].starts_with("ip=127.0.0.1,port=")) << info[slave];
    EXPECT_NE(info[slave].find(",state=online,offset="), std::string::npos) << info[slave];
    EXPECT_TRUE(info[slave].ends_with(",lag=0")) << info[slave];
  }

  for (int i = 0; i < Cluster::kNodes; ++i) {
    const int p = c.port(i);
    SCOPED_TRACE("node " + std::to_string(i + 1));
    EXPECT_EQ(MasterAddr(p), AddrReply(c.port(leader)));
    EXPECT_EQ(MasterAddr(p, "other"), "*-1\r\n");
    EXPECT_EQ(Cmd(p, {"SENTINEL", "master", "other"}), "-ERR No such master with that name\r\n");
    EXPECT_EQ(Cmd(p, {"SENTINEL", "replicas", "other"}), "-ERR No such master with that name\r\n");
    EXPECT_EQ(Cmd(p, {"SENTINEL", "sentinels", "other"}), "-ERR No such master with that name\r\n");
    EXPECT_EQ(Cmd(p, {"SENTINEL", "masters", "x"}),
              "-ERR wrong number of arguments for 'sentinel|masters' command\r\n");
    EXPECT_EQ(Cmd(p, {"SENTINEL", "nosuch"}),
              "-ERR unknown subcommand 'nosuch'. Try SENTINEL HELP.\r\n");

    const std::vector<Entry> masters = Entries(Cmd(p, {"SENTINEL", "masters"}));
    ASSERT_EQ(masters.size(), 1u);
    const Entry& m = masters[0];
    EXPECT_EQ(m.at("name"), "latch");
    EXPECT_EQ(m.at("ip"), "127.0.0.1");
    EXPECT_EQ(m.at("port"), lp);
    EXPECT_EQ(m.at("flags"), "master");
    EXPECT_EQ(m.at("role-reported"), "master");
    EXPECT_EQ(m.at("num-slaves"), "2");
    EXPECT_EQ(m.at("num-other-sentinels"), "2");
    EXPECT_EQ(m.at("quorum"), "2");
    EXPECT_EQ(m.at("down-after-milliseconds"), "1000");
    EXPECT_EQ(m.at("runid").size(), 40u);
    EXPECT_EQ(OneEntry(Cmd(p, {"SENTINEL", "master", "latch"})), m);

    const std::vector<Entry> replicas = Entries(Cmd(p, {"SENTINEL", "replicas", "latch"}));
    ASSERT_EQ(replicas.size(), 2u);
    EXPECT_EQ(Entries(Cmd(p, {"SENTINEL", "slaves", "latch"})).size(), 2u);
    for (const Entry& r : replicas) {
      EXPECT_NE(r.at("port"), lp);
      EXPECT_EQ(r.at("name"), "127.0.0.1:" + r.at("port"));
      EXPECT_EQ(r.at("flags"), "slave");
      EXPECT_EQ(r.at("master-link-status"), "ok");
      EXPECT_EQ(r.at("master-host"), "127.0.0.1");
      EXPECT_EQ(r.at("master-port"), lp);
    }
    const std::vector<Entry> sentinels = Entries(Cmd(p, {"SENTINEL", "sentinels", "latch"}));
    ASSERT_EQ(sentinels.size(), 2u);
    for (const Entry& s : sentinels) {
      EXPECT_NE(s.at("port"), std::to_string(p));
      EXPECT_EQ(s.at("flags"), "sentinel");
      EXPECT_EQ(s.at("name"), s.at("runid"));
    }

    if (i == leader) continue;
    info = InfoFields(Cmd(p, {"INFO", "replication"}));
    EXPECT_EQ(info["role"], "slave");
    EXPECT_EQ(info["master_host"], "127.0.0.1");
    EXPECT_EQ(info["master_port"], lp);
    EXPECT_EQ(info["master_link_status"], "up");
    EXPECT_EQ(info["master_last_io_seconds_ago"], "0");
    EXPECT_EQ(info["slave_read_only"], "1");
    EXPECT_EQ(info["connected_slaves"], "0");
    EXPECT_EQ(info["slave_repl_offset"], info["master_repl_offset"]);
  }
}

// After kill -9 of the leader, the two left name the new leader (under the configured name),
// and the new leader lists the dead node as a replica that is down.
TEST(LatchdClusterDiscovery, SentinelNamesTheNewLeaderAfterKillNine) {
  Cluster c({"--raft-sentinel-name", "locks"});
  std::string error;
  ASSERT_TRUE(c.Start(&error)) << error;
  const int old_leader = c.WaitLeader();
  ASSERT_NE(old_leader, -1) << "no leader within " << kElection.count() << " ms\n" << c.Logs();
  EXPECT_EQ(Cmd(c.port(old_leader), {"CONFIG", "GET", "raft-sentinel-name"}),
            "*2\r\n" + Bulk("raft-sentinel-name") + Bulk("locks"));
  EXPECT_EQ(MasterAddr(c.port(old_leader)), "*-1\r\n");
  EXPECT_EQ(MasterAddr(c.port(old_leader), "locks"), AddrReply(c.port(old_leader)));
  const std::string old_port = std::to_string(c.port(old_leader));
  c.Kill9(old_leader);

  const int leader = c.WaitLeader();
  ASSERT_NE(leader, -1) << "no new leader within " << kElection.count() << " ms\n" << c.Logs();
  for (int i = 0; i < Cluster::kNodes; ++i) {
    if (!c.alive(i)) continue;
    EXPECT_TRUE(Eventually([&] {
      return MasterAddr(c.port(i), "locks") == AddrReply(c.port(leader));
    })) << "node "
        << i + 1 << ": " << MasterAddr(c.port(i), "locks");
  }
  std::vector<Entry> replicas;
  EXPECT_TRUE(Eventually([&] {
    replicas = Entries(Cmd(c.port(leader), {"SENTINEL", "replicas", "locks"}));
    return replicas.size() == 2 &&
           (replicas[0].at("port") == old_port ? replicas[0].at("flags") == "slave,s_down"
                                               : replicas[1].at("flags") == "slave,s_down");
  })) << Cmd(c.port(leader), {"SENTINEL", "replicas", "locks"});
  const auto info = InfoFields(Cmd(c.port(leader), {"INFO", "replication"}));
  EXPECT_EQ(info.at("connected_slaves"), "1");
  EXPECT_EQ(info.at("slave0").find("port=" + old_port + ","), std::string::npos);
  EXPECT_EQ(Cmd(c.port(leader), {"SET", "k", "v"}), "+OK\r\n");
}

// A leader that loses its majority with no write in flight stays up, and closes its clients
// as Sentinel has a demoted master do: they reconnect through discovery (ioredis would
// otherwise meet -READONLY for good). Before the fix the connection stayed open.
TEST(LatchdClusterDiscovery, LeaderSteppingDownClosesItsClients) {
  Cluster c;
  std::string error;
  ASSERT_TRUE(c.Start(&error)) << error;
  const int leader = c.WaitLeader();
  ASSERT_NE(leader, -1) << "no leader within " << kElection.count() << " ms\n" << c.Logs();
  RawConnection conn(c.port(leader), kElection);
  ASSERT_EQ(conn.Command("PING"), "+PONG\r\n");
  for (int i = 0; i < Cluster::kNodes; ++i) {
    if (i != leader) c.Signal(i, SIGSTOP);
  }
  std::string trailing;
  EXPECT_TRUE(conn.WaitClosed(&trailing)) << c.Log(leader);
  EXPECT_EQ(trailing, "");
  for (int i = 0; i < Cluster::kNodes; ++i) {
    if (i != leader) c.Signal(i, SIGCONT);
  }
  EXPECT_EQ(Cmd(c.port(leader), {"PING"}), "+PONG\r\n") << c.Log(leader);
  // (The line may be written just after the client saw its connection close.)
  EXPECT_TRUE(Eventually([&] {
    return c.Log(leader).find("closed 1 client(s) on stepping down") != std::string::npos;
  })) << c.Log(leader);
  EXPECT_NE(c.WaitLeader(), -1) << c.Logs();
}

// A single latchd is no sentinel: SENTINEL is an unknown command, as on a redis-server that
// is not one; ROLE and INFO replication say master without replicas.
TEST(LatchdClusterDiscovery, SingleNodeIsNoSentinel) {
  LatchdProcess latchd;
  ASSERT_TRUE(latchd.ok()) << latchd.error();
  EXPECT_EQ(Cmd(latchd.port(), {"SENTINEL", "masters"}),
            "-ERR unknown command 'SENTINEL', with args beginning with: 'masters' \r\n");
  EXPECT_EQ(Cmd(latchd.port(), {"sentinel", "get-master-addr-by-name", "latch"}),
            "-ERR unknown command 'sentinel', with args beginning with: "
            "'get-master-addr-by-name' 'latch' \r\n");
  EXPECT_EQ(Cmd(latchd.port(), {"ROLE"}), "*3\r\n$6\r\nmaster\r\n:0\r\n*0\r\n");
  const auto info = InfoFields(Cmd(latchd.port(), {"INFO", "replication"}));
  EXPECT_EQ(info.at("role"), "master");
  EXPECT_EQ(info.at("connected_slaves"), "0");
  EXPECT_EQ(info.at("master_repl_offset"), "0");
  EXPECT_EQ(Cmd(latchd.port(), {"SET", "k", "v"}), "+OK\r\n");
}

}  // namespace
}  // namespace latch::test
