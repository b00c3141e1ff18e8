// latch::testing::ScopedServer: inspection and seeding without the network, checked against
// what a client sees over a real socket; time; restarts; counters; the gtest fixture.
#include "latch/testing/scoped_server.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "latch/testing/gtest.h"
#include "support/eventually.h"
#include "support/raw_connection.h"

namespace latch::testing {
namespace {

using namespace std::chrono_literals;
using test::Eventually;
using test::RawConnection;

TEST(ScopedServerTest, OneLineServerSeedsAndInspectsWhatClientsSee) {
  ScopedServer server;
  ASSERT_GT(server.port(), 0);
  EXPECT_EQ(server.url(), "redis://127.0.0.1:" + std::to_string(server.port()));
  RawConnection conn(server.port());
  server.Set("seeded", "v1", 5000ms);
  EXPECT_EQ(conn.Command("GET", "seeded"), "$2\r\nv1\r\n");
  EXPECT_EQ(conn.Command("SET", "from:client", "v2"), "+OK\r\n");
  EXPECT_EQ(server.Get("from:client"), "v2");
  EXPECT_EQ(server.Keys("*"), (std::vector<std::string>{"from:client", "seeded"}));
  EXPECT_EQ(server.Keys("from:*"), (std::vector<std::string>{"from:client"}));
  EXPECT_EQ(server.Ttl("seeded"), 5000);
  EXPECT_EQ(server.Ttl("from:client"), -1);
  EXPECT_EQ(server.Ttl("absent"), -2);
  EXPECT_TRUE(server.Exists("seeded"));
  EXPECT_TRUE(server.Del("seeded"));
  EXPECT_FALSE(server.Del("seeded"));
  EXPECT_EQ(conn.Command("EXISTS", "seeded"), ":0\r\n");
  server.FlushAll();
  EXPECT_EQ(conn.Command("DBSIZE"), ":0\r\n");
  EXPECT_EQ(server.Do({"PING"}), "PONG");
}

TEST(ScopedServerTest, ChecksReportReadableDiffs) {
  ScopedServer server;
  server.Set("a", "1");
  server.Set("c", "3");
  EXPECT_LATCH(server.CheckGet("a", "1"));
  EXPECT_EQ(server.CheckGet("a", "2").message, "key \"a\": expected value \"2\", got \"1\"");
  EXPECT_EQ(server.CheckGet("zz", "2").message, "key \"zz\": expected value \"2\", got no key");
  EXPECT_EQ(server.CheckKeys("*", {"a", "b"}).message,
            "keys \"*\": expected [\"a\", \"b\"], got [\"a\", \"c\"]\n  missing: [\"b\"]\n"
            "  unexpected: [\"c\"]");
  EXPECT_LATCH(server.CheckKeys("*", {"c", "a"}));
  EXPECT_EQ(server.CheckMissing("a").message,
            "key \"a\": expected no key, got value \"1\" with TTL -1 ms");
  EXPECT_EQ(server.CheckTtl("a", 10ms).message, "key \"a\": expected TTL 10 ms, got no TTL");
  EXPECT_FALSE(server.CheckLockOwner("a", "me").ok);
}

TEST(ScopedServerTest, AdvanceMovesTtlsExactlyAndStepWallOnlyTheWallClock) {
  ScopedServer server;
  RawConnection conn(server.port());
  server.Set("k", "v", 100ms);
  server.Advance(99ms);
  EXPECT_LATCH(server.CheckTtl("k", 1ms));
  server.Advance(1ms);
  EXPECT_LATCH(server.CheckMissing("k"));
  EXPECT_EQ(conn.Command("GET", "k"), "$-1\r\n");

  server.Set("rel", "v", 1000ms);
  const std::int64_t wall = server.clock().Now().wall_ms;
  server.StepWall(3600s);
  EXPECT_EQ(server.clock().Now().wall_ms, wall + 3'600'000);
  EXPECT_LATCH(server.CheckTtl("rel", 1000ms));  // a wall-clock jump frees no lock
}

// A LOCK.ACQUIRE ... WAIT times out on the injected clock, and only on it: no real-time
// timer answers it while the manual clock stands still.
TEST(ScopedServerTest, WaiterTimeoutsFollowTheManualClockOnly) {
  ScopedServer server;
  RawConnection holder(server.port());
  RawConnection waiter(server.port(), 400ms);
  ASSERT_EQ(holder.Command("LOCK.ACQUIRE", "L", "a", "60000").substr(0, 1), ":");
  ASSERT_TRUE(
      waiter.Send(RawConnection::Encode({"LOCK.ACQUIRE", "L", "b", "60000", "WAIT", "150"})));
  ASSERT_TRUE(Eventually([&] { return server.Lock("L")->waiters == 1; }));  // parked
  // Real time passes while the manual clock stands still: the read waits its 400 ms, more
  // than twice the WAIT.
  EXPECT_FALSE(waiter.ReadReply().has_value()) << "answered before the manual clock moved";
  EXPECT_EQ(server.Lock("L")->waiters, 1);
  server.Advance(149ms);
  EXPECT_EQ(server.Lock("L")->waiters, 1);
  server.Advance(1ms);
  EXPECT_EQ(server.Lock("L")->waiters, 0);  // answered by the time Advance returned
  EXPECT_EQ(waiter.ReadReply(), "$-1\r\n");
}

TEST(ScopedServerTest, AdvancePastALeaseHandsTheLockToTheWaiter) {
  ScopedServer server;
  RawConnection holder(server.port());
  RawConnection waiter(server.port());
  ASSERT_EQ(holder.Command("LOCK.ACQUIRE", "L", "a", "1000").substr(0, 1), ":");
  const std::optional<LockState> held = server.Lock("L");
  ASSERT_TRUE(held && held->fencing_token);
  EXPECT_EQ(held->owner, "a");
  EXPECT_EQ(held->ttl_ms, 1000);
  ASSERT_TRUE(waiter.Send(RawConnection::Encode({"LOCK.ACQUIRE", "L", "b", "5000", "WAIT", "0"})));
  ASSERT_TRUE(Eventually([&] { return server.Lock("L")->waiters == 1; }));
  server.Advance(1000ms);
  EXPECT_LATCH(server.CheckLockOwner("L", "b"));
  const std::optional<LockState> granted = server.Lock("L");
  EXPECT_GT(*granted->fencing_token, *held->fencing_token);
  EXPECT_EQ(granted->ttl_ms, 5000);
  EXPECT_EQ(waiter.ReadReply(), ":" + std::to_string(*granted->fencing_token) + "\r\n");
  const Counters c = server.counters();
  EXPECT_EQ(c.lock_grants, 2u);
  EXPECT_EQ(c.lock_handoffs, 1u);
  EXPECT_EQ(c.commands.at("lock.acquire"), 2u);
}

TEST(ScopedServerTest, CountersSeeConnectionsAndCommandsByName) {
  ScopedServer server;
  {
    RawConnection a(server.port());
    RawConnection b(server.port());
    a.Command("SET", "x", "1");
    a.Command("set", "x", "2");
    b.Command("GET", "x");
  }
  server.Get("x");  // in-process calls are not counted by name
  const Counters c = server.counters();
  EXPECT_EQ(c.connections_total, 2u);
  EXPECT_EQ(server.CommandCount("SET"), 2u);
  EXPECT_EQ(server.CommandCount("get"), 1u);
  EXPECT_EQ(server.CommandCount("del"), 0u);
}

TEST(ScopedServerTest, StopStartAndRestartKeepTheirPort) {
  ScopedServer server;
  const int port = server.port();
  server.Set("k", "v");
  server.Stop();
  RawConnection refused;
  EXPECT_FALSE(refused.Connect(port));
  server.Start();
  EXPECT_EQ(server.port(), port);
  RawConnection conn(port);
  EXPECT_EQ(conn.Command("GET", "k"), "$1\r\nv\r\n");
  server.Restart(Data::kKeep);
  EXPECT_TRUE(conn.WaitClosed());  // clients see the restart
  EXPECT_EQ(server.port(), port);
  EXPECT_LATCH(server.CheckGet("k", "v"));
  server.Restart(Data::kDrop);
  EXPECT_EQ(server.port(), port);
  EXPECT_LATCH(server.CheckKeys("*", {}));
}

TEST(ScopedServerTest, RestartWithTheJournalReloadsKeysAndLocks) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("latch-testkit-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  Options o = ScopedServer::DefaultOptions();
  o.appendonly = true;
  o.appendfsync = 2;  // no
  o.dir = dir.string();
  {
    ScopedServer server(o);
    RawConnection conn(server.port());
    const std::string token = conn.Command("LOCK.ACQUIRE", "L", "me", "60000");
    server.Set("plain", "v");
    server.Restart(Data::kKeep);  // a new server, loaded from the journal
    EXPECT_LATCH(server.CheckGet("plain", "v"));
    EXPECT_LATCH(server.CheckLockOwner("L", "me"));
    EXPECT_EQ(":" + std::to_string(*server.Lock("L")->fencing_token) + "\r\n", token);
    server.Restart(Data::kDrop);
    EXPECT_LATCH(server.CheckKeys("*", {}));
  }
  std::filesystem::remove_all(dir);
}

class FixtureTest : public LatchTest {};

TEST_F(FixtureTest, GivesEachTestItsOwnServer) {
  EXPECT_LATCH(latch().CheckKeys("*", {}));
  latch().Set("mine", "1");
  RawConnection conn(latch().port());
  EXPECT_EQ(conn.Command("GET", "mine"), "$1\r\n1\r\n");
}

TEST_F(FixtureTest, RequireAuthAsksClientsForThePassword) {
  latch().RequireAuth("s3cret");
  EXPECT_EQ(latch().url(), "redis://:s3cret@127.0.0.1:" + std::to_string(latch().port()));
  RawConnection conn(latch().port());
  EXPECT_EQ(conn.Command("GET", "k").substr(0, 8), "-NOAUTH ");
  EXPECT_EQ(conn.Command("AUTH", "s3cret"), "+OK\r\n");
}

}  // namespace
}  // namespace latch::testing
