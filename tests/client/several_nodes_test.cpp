// latch::Client given several nodes (redis://h1:p1,h2:p2,...): the URL form, and following the
// master of a real Redis master/replica pair, which is how it follows a latch cluster's leader
// (tests/cluster/latchd_client_test.cpp does that one across a kill -9).
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "child_server.h"
#include "latch/client.h"
#include "support/eventually.h"

namespace latch::test {
namespace {

TEST(SeveralNodesUrl, EachHostSharesUserPasswordDatabaseAndScheme) {
  auto o = ClientOptions::FromUrl("redis://app:p%40ss@h1:7001,h2,[::1]:7003/4");
  ASSERT_TRUE(o.ok()) << o.error().ToString();
  ASSERT_EQ(o->nodes.size(), 3u);
  EXPECT_EQ(o->nodes[0].host, "h1");
  EXPECT_EQ(o->nodes[0].port, 7001);
  EXPECT_EQ(o->nodes[1].host, "h2");
  EXPECT_EQ(o->nodes[1].port, 6379);
  EXPECT_EQ(o->nodes[2].host, "::1");
  EXPECT_EQ(o->nodes[2].port, 7003);
  for (const Endpoint& e : o->nodes) {
    EXPECT_EQ(e.user, "app");
    EXPECT_EQ(e.password, "p@ss");
    EXPECT_EQ(e.db, 4);
    EXPECT_FALSE(e.tls);
  }
  EXPECT_EQ(o->endpoint.host, "h1");

  auto tls = ClientOptions::FromUrl("rediss://a:1,b:2");
  ASSERT_TRUE(tls.ok());
  EXPECT_TRUE(tls->nodes[0].tls && tls->nodes[1].tls);

  auto one = ClientOptions::FromUrl("redis://:pw@h:7000/2");
  ASSERT_TRUE(one.ok());
  EXPECT_TRUE(one->nodes.empty());  // one node: the plain client, no ROLE on connect
  EXPECT_EQ(one->endpoint.port, 7000);
  EXPECT_EQ(one->endpoint.db, 2);

  for (const char* bad : {"redis://h1,", "redis://,h2", "redis://h1:1,h2:x", "redis://h1,,h3"}) {
    auto r = ClientOptions::FromUrl(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_TRUE(r.error().is(Errc::kInvalidArgument)) << bad;
    }
  }
}

// The replica is listed first; the client asks it ROLE, is told where its master is, and every
// write goes there (the replica itself would answer -READONLY).
TEST(SeveralNodesRedis, WritesGoToTheMasterTheReplicaNames) {
  // No diskless-sync delay: the replica has the first write at once, not after 5 s.
  ChildServer master(ChildServer::Kind::kRedis, {"--repl-diskless-sync-delay", "0"});
  ASSERT_TRUE(master.ok()) << master.error();
  // Loaded from the socket: no dump.rdb written in the test's working directory.
  ChildServer replica(ChildServer::Kind::kRedis,
                      {"--replicaof", "127.0.0.1", std::to_string(master.port()),
                       "--repl-diskless-load", "on-empty-db"});
  ASSERT_TRUE(replica.ok()) << replica.error();

  const std::string both = "redis://127.0.0.1:" + std::to_string(replica.port()) +
                           ",127.0.0.1:" + std::to_string(master.port());
  auto options = ClientOptions::FromUrl(both).value();
  options.call_timeout = std::chrono::milliseconds(5000);
  Client client(options);
  auto set = client.command_sync("SET", "several:k", "v1", "NX", "PX", 60000);
  ASSERT_TRUE(set.ok()) << set.error().ToString();
  ASSERT_EQ(set->str, "OK");

  // The key is on the master; the replica gets it by replication.
  Client on_master(ClientOptions::FromUrl(master.url()).value());
  EXPECT_EQ(on_master.command_sync("GET", "several:k")->str, "v1");
  Client on_replica(ClientOptions::FromUrl(replica.url()).value());
  EXPECT_TRUE(Eventually(
      [&] {
        auto r = on_replica.command_sync("GET", "several:k");
        return r.ok() && r->str == "v1";
      },
      std::chrono::milliseconds(10000)));
  // What a client of the replica alone gets, and this one avoided.
  auto refused = on_replica.command_sync("SET", "several:k2", "x");
  ASSERT_TRUE(refused.ok());
  EXPECT_TRUE(refused->is_error() && refused->str.starts_with("READONLY")) << refused->str;

  // A pipeline goes to the master too.
  std::vector<Command> cmds;
  for (int i = 0; i < 10; ++i) cmds.emplace_back("INCR", "several:n");
  auto p = client.pipeline_sync(std::move(cmds));
  ASSERT_TRUE(p.ok()) << p.error().ToString();
  EXPECT_EQ(p->back().integer, 10);
  EXPECT_EQ(on_master.command_sync("GET", "several:n")->str, "10");

  // The master goes down: the replica still answers, so the client waits for a master (as for
  // a latch cluster's election) until the call's timeout, and writes nothing to the replica.
  master.Kill();
  CallOptions brief;
  brief.timeout = std::chrono::milliseconds(1500);
  // (The first call may still be written to the master's socket before the client reads its
  // end: it fails with kConnectionLost, outcome unknown. The next one is a fresh search.)
  auto first = client.execute_sync(Command("SET", "several:k3", "x"), brief);
  ASSERT_FALSE(first.ok()) << "written to the replica: " << first->str;
  auto orphan = client.execute_sync(Command("SET", "several:k3", "x"), brief);
  ASSERT_FALSE(orphan.ok()) << "written to the replica: " << orphan->str;
  EXPECT_TRUE(orphan.error().is(Errc::kTimeout)) << orphan.error().ToString();
  EXPECT_EQ(on_replica.command_sync("EXISTS", "several:k3")->integer, 0);
  // With no node answering at all, calls fail at once instead.
  replica.Kill();
  auto none = client.execute_sync(Command("PING"), brief);
  ASSERT_FALSE(none.ok());
  EXPECT_TRUE(none.error().is(Errc::kConnectFailed)) << none.error().ToString();
}

}  // namespace
}  // namespace latch::test
