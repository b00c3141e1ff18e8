// The Upstash REST endpoint of a Raft follower (docs/CLUSTER.md, "REST on a follower"), over
// real latchd processes: a request whose commands need the leader is relayed to the leader's
// REST endpoint and answered as the leader answers it (SET NX PX, the compare-and-delete
// EVAL, /pipeline, /multi-exec, in the style of tests/wire/rest_wire_test.cpp); the leader
// authenticates the credential again and applies its own ACL for that user; while no leader
// is known the answer is the TRYAGAIN error RESP gives.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "cluster/latchd_cluster.h"
#include "support/eventually.h"
#include "support/http_connection.h"

namespace latch::test {
namespace {

using std::chrono::milliseconds;

const std::string kRestFollowerToken = "Authorization: Bearer tok";
const std::string kRestFollowerTryAgain =
    R"({"error":"TRYAGAIN no Raft leader is known, retry later"})";

// A 3-node cluster whose nodes serve REST (rest-token "tok") on ports of their own.
struct RestCluster {
  Cluster c{{"--rest-token", "tok"}};
  std::vector<int> rest;
  int leader = -1;
  int f = -1;  // a follower
  // Starts the nodes, waits for a leader and until follower f relays: once it has applied the
  // leader's REST port (its member entry), reads and writes sent to it run on the leader.
  bool StartRelaying(std::string* error) {
    for (int i = 0; i < c.size(); ++i) rest.push_back(FreePort());
    for (int i = 0; i < c.size(); ++i) {
      if (!c.StartNode(i, error, {"--rest-port", std::to_string(rest[i])})) return false;
    }
    if ((leader = c.WaitLeader()) == -1) {
      *error = "no leader\n" + c.Logs();
      return false;
    }
    f = (leader + 1) % c.size();
    if (!Eventually([&] { return Post(f, "/", R"(["GET","nothing"])").status == 200; },
                    kElection)) {
      *error = "the follower does not relay: " + Post(f, "/", R"(["GET","nothing"])").body + "\n" +
               c.Logs();
      return false;
    }
    return true;
  }
  HttpResponse Post(int i, const std::string& target, const std::string& body,
                    const std::string& auth = kRestFollowerToken) {
    HttpConnection http(rest[i], milliseconds(10000));
    return http.Request("POST", target, body, {auth});
  }
};

const std::string kRestFollowerRelease =
    R"(if redis.call(\"get\", KEYS[1]) == ARGV[1] then return redis.call(\"del\", KEYS[1]) )"
    R"(else return 0 end)";

TEST(LatchdRestFollower, RelaysLocksPipelinesAndTransactionsToTheLeader) {
  RestCluster r;
  std::string error;
  ASSERT_TRUE(r.StartRelaying(&error)) << error;
  const int leader = r.leader, f = r.f;
  EXPECT_EQ(r.Post(f, "/", R"(["SET","lock:p1","me","NX","PX",15000])").body, R"({"result":"OK"})");
  EXPECT_EQ(r.Post(f, "/", R"(["SET","lock:p1","other","NX","PX",15000])").body,
            R"({"result":null})");
  EXPECT_EQ(Cmd(r.c.port(leader), {"GET", "lock:p1"}), Bulk("me"));
  const int pttl = static_cast<int>(IntegerOf(Cmd(r.c.port(leader), {"PTTL", "lock:p1"})));
  EXPECT_GT(pttl, 10000);
  EXPECT_LE(pttl, 15000);
  EXPECT_EQ(
      r.Post(f, "/", "[\"EVAL\",\"" + kRestFollowerRelease + "\",1,\"lock:p1\",\"other\"]").body,
      R"({"result":0})");
  EXPECT_EQ(r.Post(f, "/", "[\"EVAL\",\"" + kRestFollowerRelease + "\",1,\"lock:p1\",\"me\"]").body,
            R"({"result":1})");
  EXPECT_EQ(Cmd(r.c.port(leader), {"EXISTS", "lock:p1"}), ":0\r\n");

  HttpResponse p = r.Post(f, "/pipeline", R"([["SET","a","1"],["INCR","a"],["INCR","nope","x"],
      ["SET","s","text"],["INCR","s"],["GET","a"]])");
  EXPECT_EQ(p.status, 200);
  EXPECT_EQ(p.body,
            R"([{"result":"OK"},{"result":2},)"
            R"({"error":"ERR wrong number of arguments for 'incr' command"},{"result":"OK"},)"
            R"({"error":"ERR value is not an integer or out of range"},{"result":"2"}])");
  p = r.Post(f, "/multi-exec", R"([["SET","t","1"],["INCR","t"],["INCRBY","t","x"]])");
  EXPECT_EQ(p.status, 200);
  EXPECT_EQ(p.body, R"([{"result":"OK"},{"result":2},)"
                    R"({"error":"ERR value is not an integer or out of range"}])");
  p = r.Post(f, "/multi-exec", R"([["SET","t","100"],["NOSUCH","x"]])");
  EXPECT_EQ(p.status, 400);
  EXPECT_EQ(p.body, R"({"error":"EXECABORT Transaction discarded because of previous errors."})");
  EXPECT_EQ(r.Post(f, "/", R"(["GET","t"])").body, R"({"result":"2"})");
  // The path form, and a command that needs no leader, answered by the follower itself.
  HttpConnection http(r.rest[f], milliseconds(10000));
  EXPECT_EQ(http.Request("GET", "/get/a", "", {kRestFollowerToken}).body, R"({"result":"2"})");
  EXPECT_EQ(
      http.Request("GET", "/role", "", {kRestFollowerToken}).body.find(R"({"result":["slave",)"),
      0u);
  // A wrong credential is refused by the follower before anything is relayed.
  EXPECT_EQ(r.Post(f, "/", R"(["SET","k","v"])", "Authorization: Bearer nope").status, 401);
}

// The leader checks the credential and the permissions itself: a user the follower knows but
// the leader does not is refused there, and a user narrower on the leader gets the leader's
// NOPERM (ACL is each node's own configuration, as for RESP forwarding).
TEST(LatchdRestFollower, TheLeaderAppliesItsOwnAclForTheRequestsUser) {
  RestCluster r;
  std::string error;
  ASSERT_TRUE(r.StartRelaying(&error)) << error;
  const int leader = r.leader, f = r.f;
  const std::string alice = "Authorization: Bearer alice:pw";
  // Only on the follower: the leader does not know alice.
  ASSERT_EQ(Cmd(r.c.port(f), {"ACL", "SETUSER", "alice", "on", ">pw", "~*", "+@all"}), "+OK\r\n");
  HttpResponse a = r.Post(f, "/", R"(["SET","other:k","v"])", alice);
  EXPECT_EQ(a.status, 401);
  EXPECT_EQ(a.body, R"({"error":"WRONGPASS invalid or missing auth token"})");
  // On the leader, narrower: keys allowed:* only, no FLUSHALL.
  ASSERT_EQ(Cmd(r.c.port(leader),
                {"ACL", "SETUSER", "alice", "on", ">pw", "~allowed:*", "+@all", "-flushall"}),
            "+OK\r\n");
  EXPECT_EQ(r.Post(f, "/", R"(["SET","allowed:k","v","NX","PX",15000])", alice).body,
            R"({"result":"OK"})");
  a = r.Post(f, "/", R"(["SET","other:k","v"])", alice);
  EXPECT_EQ(a.status, 400);
  EXPECT_EQ(a.body,
            R"({"error":"NOPERM this user has no permissions to access one of the keys used as )"
            R"(arguments"})");
  a = r.Post(f, "/pipeline", R"([["GET","allowed:k"],["FLUSHALL"]])", alice);
  EXPECT_EQ(a.body,
            R"([{"result":"v"},)"
            R"({"error":"NOPERM this user has no permissions to run the 'flushall' command"}])");
  EXPECT_EQ(Cmd(r.c.port(leader), {"EXISTS", "other:k"}), ":0\r\n");
  EXPECT_EQ(Cmd(r.c.port(leader), {"GET", "allowed:k"}), Bulk("v"));
}

// The leader killed: a request sent to the follower is answered (relayed to the leader
// elected next, or TRYAGAIN while it cannot reach one), never left hanging; with a majority
// gone, TRYAGAIN as a REST error body.
TEST(LatchdRestFollower, LeaderGoneGivesTryAgainAndTheNextLeaderServes) {
  RestCluster r;
  std::string error;
  ASSERT_TRUE(r.StartRelaying(&error)) << error;
  const int leader = r.leader, f = r.f;
  const int third = (leader + 2) % r.c.size();
  r.c.Kill9(leader);
  HttpResponse a = r.Post(f, "/", R"(["SET","after","kill"])");
  EXPECT_TRUE(a.body == R"({"result":"OK"})" || a.body == kRestFollowerTryAgain)
      << a.status << " " << a.body;
  EXPECT_TRUE(Eventually(
      [&] { return r.Post(f, "/", R"(["SET","after","kill"])").body == R"({"result":"OK"})"; },
      kElection))
      << r.c.Logs();
  // A read: a write taken by a leader that then loses its majority stops it (a dirty
  // leader, "Known gaps"), whatever the endpoint.
  r.c.Kill9(third);
  EXPECT_TRUE(Eventually(
      [&] {
        a = r.Post(f, "/", R"(["GET","after"])");
        return a.status == 400 && a.body == kRestFollowerTryAgain;
      },
      kElection))
      << a.status << " " << a.body << r.c.Logs();
}

}  // namespace
}  // namespace latch::test
