// LOCK.* over real sockets against the embedded server: parked clients handed the lock in
// FIFO order, timeouts and disconnects leaving the queue, hand-off on expiry, fencing
// tokens across release/expiry/DEL/restart, mixed clients (SET NX PX + LOCK.*), wall-clock
// steps, INFO's Locks section, and 50 contending clients incrementing a counter.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "support/embedded_server.h"
#include "support/raw_connection.h"
#include "support/wire_expect.h"

namespace latch::test {
namespace {

using namespace std::chrono_literals;

// ":123\r\n" -> 123; 0 for anything else (tokens are never 0).
std::uint64_t LockTokenOf(const std::optional<std::string>& reply) {
  if (!reply || reply->size() < 4 || (*reply)[0] != ':') return 0;
  return std::stoull(reply->substr(1));
}
std::uint64_t LockTokenOf(const std::string& reply) { return LockTokenOf(std::optional(reply)); }

// The waiters count of LOCK.INFO's RESP2 reply (the last integer of the flat array).
int LockWaitersOf(RawConnection& c, const std::string& key) {
  std::string r = c.Command("LOCK.INFO", key);
  auto pos = r.rfind("waiters\r\n:");
  if (pos == std::string::npos) return -1;
  return std::stoi(r.substr(pos + 10));
}

// Sends LOCK.ACQUIRE ... WAIT without reading the reply, then waits until the server
// has queued it (the queue is `expect_waiters` long), so that arrival order is known.
void LockPark(RawConnection& waiter, RawConnection& observer, const std::string& key,
              const std::string& owner, const std::string& ttl, const std::string& timeout,
              int expect_waiters) {
  ASSERT_TRUE(waiter.Send(RawConnection::Encode({"LOCK.ACQUIRE", key, owner, ttl, "WAIT",
                                                 timeout})));
  ASSERT_TRUE(Eventually([&] { return LockWaitersOf(observer, key) == expect_waiters; }))
      << owner << " never queued";
}

TEST(LockWire, AcquireReleaseExtendReplies) {
  EmbeddedServer server;
  RawConnection c(server.port());
  std::uint64_t t = LockTokenOf(c.Command("LOCK.ACQUIRE", "k", "alice", "1000"));
  ASSERT_NE(t, 0u);
  EXPECT_EQ(c.Command("LOCK.ACQUIRE", "k", "bob", "1000"), "$-1\r\n");
  EXPECT_EQ(c.Command("LOCK.ACQUIRE", "k", "alice", "1000"), "$-1\r\n");
  EXPECT_EQ(c.Command("GET", "k"), Bulk("alice"));
  EXPECT_EQ(c.Command("PTTL", "k"), ":1000\r\n");
  EXPECT_EQ(c.Command("LOCK.EXTEND", "k", "bob", "5000"), ":0\r\n");
  EXPECT_EQ(c.Command("LOCK.EXTEND", "k", "alice", "5000"), ":1\r\n");
  EXPECT_EQ(c.Command("PTTL", "k"), ":5000\r\n");
  EXPECT_EQ(c.Command("LOCK.RELEASE", "k", "bob"), ":0\r\n");
  EXPECT_EQ(c.Command("LOCK.RELEASE", "k", "alice"), ":1\r\n");
  EXPECT_EQ(c.Command("LOCK.RELEASE", "k", "alice"), ":-1\r\n");
  EXPECT_EQ(c.Command("LOCK.EXTEND", "k", "alice", "5000"), ":-1\r\n");
  EXPECT_EQ(c.Command("GET", "k"), "$-1\r\n");
}

TEST(LockWire, ArgumentErrors) {
  EmbeddedServer server;
  RawConnection c(server.port());
  EXPECT_EQ(c.Command("LOCK.ACQUIRE", "k", "o"),
            "-ERR wrong number of arguments for 'lock.acquire' command\r\n");
  EXPECT_EQ(c.Command("LOCK.ACQUIRE", "k", "o", "x"),
            "-ERR value is not an integer or out of range\r\n");
  EXPECT_EQ(c.Command("LOCK.ACQUIRE", "k", "o", "0"),
            "-ERR invalid expire time in 'lock.acquire' command\r\n");
  EXPECT_EQ(c.Command("LOCK.ACQUIRE", "k", "o", "100", "WAIT"), "-ERR syntax error\r\n");
  EXPECT_EQ(c.Command("LOCK.ACQUIRE", "k", "o", "100", "WAIT", "-1"),
            "-ERR timeout is negative\r\n");
  EXPECT_EQ(c.Command("LOCK.ACQUIRE", "k", "o", "100", "NOWAIT", "1"), "-ERR syntax error\r\n");
  EXPECT_EQ(c.Command("LOCK.EXTEND", "k", "o", "-5"),
            "-ERR invalid expire time in 'lock.extend' command\r\n");
  EXPECT_EQ(c.Command("LOCK.RELEASE", "k"),
            "-ERR wrong number of arguments for 'lock.release' command\r\n");
  EXPECT_EQ(c.Command("DBSIZE"), ":0\r\n");
}

TEST(LockWire, InfoIsAMapInResp3AndAFlatArrayInResp2) {
  EmbeddedServer server;
  RawConnection c(server.port());
  EXPECT_EQ(c.Command("LOCK.INFO", "k"), "$-1\r\n");
  std::uint64_t t = LockTokenOf(c.Command("LOCK.ACQUIRE", "k", "alice", "1000"));
  server.clock().advance(250);
  const std::string tok = std::to_string(t);
  EXPECT_EQ(c.Command("LOCK.INFO", "k"), "*8\r\n" + Bulk("owner") + Bulk("alice") +
                                             Bulk("token") + ":" + tok + "\r\n" + Bulk("ttl") +
                                             ":750\r\n" + Bulk("waiters") + ":0\r\n");
  ASSERT_EQ(c.Command("HELLO", "3").substr(0, 1), "%");
  EXPECT_EQ(c.Command("LOCK.INFO", "k"), "%4\r\n" + Bulk("owner") + Bulk("alice") +
                                             Bulk("token") + ":" + tok + "\r\n" + Bulk("ttl") +
                                             ":750\r\n" + Bulk("waiters") + ":0\r\n");
  // A key locked by a plain SET has no token.
  c.Command("SET", "plain", "bob");
  EXPECT_EQ(c.Command("LOCK.INFO", "plain"), "%4\r\n" + Bulk("owner") + Bulk("bob") +
                                                 Bulk("token") + "_\r\n" + Bulk("ttl") +
                                                 ":-1\r\n" + Bulk("waiters") + ":0\r\n");
}

TEST(LockWire, ParkedClientsAreGrantedInFifoOrder) {
  EmbeddedServer server;
  RawConnection holder(server.port()), obs(server.port());
  ASSERT_NE(LockTokenOf(holder.Command("LOCK.ACQUIRE", "k", "a", "60000")), 0u);
  std::vector<std::unique_ptr<RawConnection>> w;
  const std::vector<std::string> owners = {"b", "c", "d"};
  for (std::size_t i = 0; i < owners.size(); ++i) {
    w.push_back(std::make_unique<RawConnection>(server.port()));
    LockPark(*w[i], obs, "k", owners[i], "60000", "0", static_cast<int>(i) + 1);
  }
  std::string prev = "a";
  std::uint64_t prev_token = 0;
  for (std::size_t i = 0; i < owners.size(); ++i) {
    ASSERT_EQ(obs.Command("LOCK.RELEASE", "k", prev), ":1\r\n");
    std::uint64_t t = LockTokenOf(w[i]->ReadReply());
    ASSERT_NE(t, 0u) << owners[i] << " was not granted";
    EXPECT_GT(t, prev_token);
    prev_token = t;
    EXPECT_EQ(obs.Command("GET", "k"), Bulk(owners[i]));
    EXPECT_EQ(LockWaitersOf(obs, "k"), static_cast<int>(owners.size() - i - 1));
    prev = owners[i];
  }
  EXPECT_EQ(InfoField(obs, "locks", "lock_handoffs"), "3");
  EXPECT_EQ(InfoField(obs, "locks", "lock_waiters"), "0");
}

TEST(LockWire, TimeoutLeavesTheQueueAndRepliesNil) {
  EmbeddedServer server;
  RawConnection holder(server.port()), w(server.port()), obs(server.port());
  ASSERT_NE(LockTokenOf(holder.Command("LOCK.ACQUIRE", "k", "a", "60000")), 0u);
  LockPark(w, obs, "k", "b", "1000", "50", 1);
  server.clock().advance(50);  // on a manual clock only the clock ends a WAIT
  EXPECT_EQ(w.ReadReply(), "$-1\r\n");
  EXPECT_EQ(LockWaitersOf(obs, "k"), 0);
  EXPECT_EQ(InfoField(obs, "locks", "lock_waiters"), "0");
  // The connection works again, and a release after the timeout grants nobody.
  EXPECT_EQ(w.Command("PING"), "+PONG\r\n");
  EXPECT_EQ(holder.Command("LOCK.RELEASE", "k", "a"), ":1\r\n");
  EXPECT_EQ(obs.Command("EXISTS", "k"), ":0\r\n");
}

TEST(LockWire, DisconnectedWaiterLeavesTheQueueAndTheNextGetsTheLock) {
  EmbeddedServer server;
  RawConnection holder(server.port()), obs(server.port());
  auto gone = std::make_unique<RawConnection>(server.port());
  RawConnection next(server.port());
  ASSERT_NE(LockTokenOf(holder.Command("LOCK.ACQUIRE", "k", "a", "60000")), 0u);
  LockPark(*gone, obs, "k", "gone", "60000", "0", 1);
  LockPark(next, obs, "k", "next", "60000", "0", 2);
  gone.reset();  // closes the socket
  ASSERT_TRUE(Eventually([&] { return LockWaitersOf(obs, "k") == 1; }));
  EXPECT_EQ(holder.Command("LOCK.RELEASE", "k", "a"), ":1\r\n");
  EXPECT_NE(LockTokenOf(next.ReadReply()), 0u);
  EXPECT_EQ(obs.Command("GET", "k"), Bulk("next"));
}

TEST(LockWire, ExpiryHandsOffOnTheTickWithoutAnyAccess) {
  EmbeddedServer server;
  RawConnection holder(server.port()), w(server.port()), obs(server.port());
  ASSERT_NE(LockTokenOf(holder.Command("LOCK.ACQUIRE", "k", "a", "1000")), 0u);
  LockPark(w, obs, "k", "b", "5000", "0", 1);
  server.clock().advance(1000);
  // Active expiry runs every 100 ms of real time: the grant arrives within a few ticks.
  std::uint64_t t = LockTokenOf(w.ReadReply());
  EXPECT_NE(t, 0u);
  EXPECT_EQ(obs.Command("GET", "k"), Bulk("b"));
  EXPECT_EQ(obs.Command("PTTL", "k"), ":5000\r\n");
  EXPECT_EQ(InfoField(obs, "locks", "lock_expired_while_held"), "1");
}

TEST(LockWire, ExpiryHandsOffOnTheFirstAccessBeforeTheTick) {
  EmbeddedServer server;
  RawConnection holder(server.port()), w(server.port()), obs(server.port());
  ASSERT_NE(LockTokenOf(holder.Command("LOCK.ACQUIRE", "k", "a", "1000")), 0u);
  LockPark(w, obs, "k", "b", "5000", "0", 1);
  server.clock().advance(1000);
  // A SET NX right after the expiry cannot steal the lock from the queue.
  EXPECT_EQ(obs.Command("SET", "k", "intruder", "NX", "PX", "1000"), "$-1\r\n");
  EXPECT_NE(LockTokenOf(w.ReadReply()), 0u);
  EXPECT_EQ(obs.Command("GET", "k"), Bulk("b"));
}

TEST(LockWire, DeleteOfAnyKindHandsOff) {
  EmbeddedServer server;
  RawConnection obs(server.port()), w(server.port());
  const std::vector<std::vector<std::string>> deletes = {
      {"DEL", "k"}, {"UNLINK", "k"}, {"GETDEL", "k"}, {"DELEX", "k"},
      {"DELIFEQ", "k", "holder"}, {"DELEX", "k", "IFEQ", "holder"}, {"FLUSHALL"},
      {"PEXPIRE", "k", "0"}};
  for (const auto& del : deletes) {
    ASSERT_EQ(obs.Command("SET", "k", "holder", "PX", "60000"), "+OK\r\n");
    LockPark(w, obs, "k", "w", "60000", "0", 1);
    obs.CommandArgs(del);
    ASSERT_NE(LockTokenOf(w.ReadReply()), 0u) << del[0];
    EXPECT_EQ(obs.Command("GET", "k"), Bulk("w")) << del[0];
    ASSERT_EQ(obs.Command("DEL", "k"), ":1\r\n");
  }
}

TEST(LockWire, MixedClientsSeeOneTruth) {
  EmbeddedServer server;
  RawConnection c(server.port());
  // A SET NX PX lock is released (and extended) by LOCK.* with the same owner.
  ASSERT_EQ(c.Command("SET", "k", "tok1", "NX", "PX", "1000"), "+OK\r\n");
  EXPECT_EQ(c.Command("LOCK.ACQUIRE", "k", "tok2", "1000"), "$-1\r\n");
  EXPECT_EQ(c.Command("LOCK.EXTEND", "k", "tok1", "3000"), ":1\r\n");
  EXPECT_EQ(c.Command("PTTL", "k"), ":3000\r\n");
  EXPECT_EQ(c.Command("LOCK.RELEASE", "k", "tok1"), ":1\r\n");
  // A LOCK.ACQUIRE lock blocks SET NX and is released by the compare-and-delete script's
  // native equivalent.
  ASSERT_NE(LockTokenOf(c.Command("LOCK.ACQUIRE", "k", "tok2", "1000")), 0u);
  EXPECT_EQ(c.Command("SET", "k", "x", "NX", "PX", "1000"), "$-1\r\n");
  EXPECT_EQ(c.Command("DELEX", "k", "IFEQ", "tok1"), ":0\r\n");
  EXPECT_EQ(c.Command("DELEX", "k", "IFEQ", "tok2"), ":1\r\n");
  EXPECT_EQ(c.Command("LOCK.RELEASE", "k", "tok2"), ":-1\r\n");
}

TEST(LockWire, WallClockStepsNeitherFreeNorExtendButPxatFollowsWallTime) {
  EmbeddedServer server;
  RawConnection c(server.port());
  ASSERT_NE(LockTokenOf(c.Command("LOCK.ACQUIRE", "lock", "a", "1000")), 0u);
  std::int64_t wall = server.clock().Now().wall_ms;
  ASSERT_EQ(c.Command("SET", "abs", "v", "PXAT", std::to_string(wall + 5000)), "+OK\r\n");
  server.clock().step_wall(10'000);
  EXPECT_EQ(c.Command("GET", "lock"), Bulk("a"));
  EXPECT_EQ(c.Command("PTTL", "lock"), ":1000\r\n");
  EXPECT_EQ(c.Command("LOCK.ACQUIRE", "lock", "b", "1000"), "$-1\r\n");
  // PXAT is converted to the monotonic clock when it is set: a later wall step does not
  // move it, but a PXAT given after the step is read against the new wall time.
  EXPECT_EQ(c.Command("SET", "abs2", "v", "PXAT", std::to_string(wall + 5000)), "+OK\r\n");
  EXPECT_EQ(c.Command("GET", "abs2"), "$-1\r\n") << "wall+5000 is in the past now";
  server.clock().step_wall(-20'000);
  server.clock().advance(999);
  EXPECT_EQ(c.Command("GET", "lock"), Bulk("a"));
  server.clock().advance(1);
  EXPECT_EQ(c.Command("GET", "lock"), "$-1\r\n");
}

TEST(LockWire, FencingTokensIncreaseAcrossReleaseExpiryDelAndRestart) {
  std::vector<std::uint64_t> tokens;
  const std::int64_t wall = 1'700'000'000'000;
  {
    EmbeddedServer server(EmbeddedServer::DefaultOptions(), wall);
    RawConnection c(server.port());
    tokens.push_back(LockTokenOf(c.Command("LOCK.ACQUIRE", "k", "a", "1000")));
    c.Command("LOCK.RELEASE", "k", "a");
    tokens.push_back(LockTokenOf(c.Command("LOCK.ACQUIRE", "k", "a", "1000")));
    server.clock().advance(1000);
    tokens.push_back(LockTokenOf(c.Command("LOCK.ACQUIRE", "k", "a", "1000")));
    c.Command("DEL", "k");
    tokens.push_back(LockTokenOf(c.Command("LOCK.ACQUIRE", "k", "a", "1000")));
    server.clock().step_wall(-60'000);  // a step back inside one run changes nothing
    c.Command("DEL", "k");
    tokens.push_back(LockTokenOf(c.Command("LOCK.ACQUIRE", "k", "a", "1000")));
  }
  {
    // A new process one millisecond later (the wall clock moved forward).
    EmbeddedServer server(EmbeddedServer::DefaultOptions(), wall + 1001);
    RawConnection c(server.port());
    tokens.push_back(LockTokenOf(c.Command("LOCK.ACQUIRE", "k", "a", "1000")));
  }
  for (std::size_t i = 0; i < tokens.size(); ++i) ASSERT_NE(tokens[i], 0u) << i;
  for (std::size_t i = 1; i < tokens.size(); ++i) EXPECT_GT(tokens[i], tokens[i - 1]) << i;
}

TEST(LockWire, WaitInsideMultiDoesNotBlock) {
  EmbeddedServer server;
  RawConnection c(server.port());
  ASSERT_NE(LockTokenOf(c.Command("LOCK.ACQUIRE", "k", "a", "60000")), 0u);
  ASSERT_EQ(c.Command("MULTI"), "+OK\r\n");
  ASSERT_EQ(c.Command("LOCK.ACQUIRE", "k", "b", "1000", "WAIT", "0"), "+QUEUED\r\n");
  EXPECT_EQ(c.Command("EXEC"), "*1\r\n$-1\r\n");
  EXPECT_EQ(LockWaitersOf(c, "k"), 0);
}

TEST(LockWire, InfoLocksSection) {
  EmbeddedServer server;
  RawConnection c(server.port());
  ASSERT_NE(LockTokenOf(c.Command("LOCK.ACQUIRE", "k", "a", "1000")), 0u);
  c.Command("LOCK.ACQUIRE", "k", "b", "1000");
  c.Command("LOCK.RELEASE", "k", "b");
  server.clock().advance(1000);
  c.Command("GET", "k");
  EXPECT_EQ(InfoField(c, "locks", "lock_grants"), "1");
  EXPECT_EQ(InfoField(c, "locks", "lock_contended_acquires"), "1");
  EXPECT_EQ(InfoField(c, "locks", "lock_waiters"), "0");
  EXPECT_EQ(InfoField(c, "locks", "lock_handoffs"), "0");
  EXPECT_EQ(InfoField(c, "locks", "lock_releases_by_non_owner"), "1");
  EXPECT_EQ(InfoField(c, "locks", "lock_expired_while_held"), "1");
  EXPECT_NE(c.Command("INFO").find("# Locks\r\n"), std::string::npos);
}

// 50 clients queue on one key; each, once granted, does a non-atomic read-modify-write of
// a counter and releases. Exactly 50 grants, strictly increasing tokens, never two holders.
TEST(LockWire, FiftyContendingWaitersIncrementACounterExactlyOnceEach) {
  EmbeddedServer server;
  constexpr int kClients = 50;
  std::atomic<int> inside{0};
  std::atomic<int> overlaps{0};
  std::vector<std::uint64_t> tokens(kClients, 0);
  std::vector<std::string> errors(kClients);
  std::vector<std::thread> threads;
  for (int i = 0; i < kClients; ++i) {
    threads.emplace_back([&, i] {
      RawConnection c(server.port(), 20000ms);
      const std::string owner = "owner-" + std::to_string(i);
      std::uint64_t t = LockTokenOf(c.Command("LOCK.ACQUIRE", "lock", owner, "30000", "WAIT", "0"));
      if (t == 0) {
        errors[i] = "not granted";
        return;
      }
      tokens[i] = t;
      if (inside.fetch_add(1) != 0) overlaps.fetch_add(1);
      std::string v = c.Command("GET", "counter");
      int n = v == "$-1\r\n" ? 0 : std::stoi(v.substr(v.find("\r\n") + 2));
      if (c.Command("GET", "lock") != Bulk(owner)) errors[i] = "not the holder";
      c.Command("SET", "counter", std::to_string(n + 1));
      inside.fetch_sub(1);
      if (c.Command("LOCK.RELEASE", "lock", owner) != ":1\r\n") errors[i] = "release failed";
    });
  }
  for (auto& t : threads) t.join();
  for (int i = 0; i < kClients; ++i) EXPECT_EQ(errors[i], "") << "client " << i;
  EXPECT_EQ(overlaps.load(), 0);
  RawConnection c(server.port());
  EXPECT_EQ(c.Command("GET", "counter"), Bulk("50"));
  EXPECT_EQ(InfoField(c, "locks", "lock_grants"), "50");
  std::sort(tokens.begin(), tokens.end());
  EXPECT_EQ(std::adjacent_find(tokens.begin(), tokens.end()), tokens.end()) << "token reused";
  EXPECT_EQ(c.Command("EXISTS", "lock"), ":0\r\n");
}

}  // namespace
}  // namespace latch::test
