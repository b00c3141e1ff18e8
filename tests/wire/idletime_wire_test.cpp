// OBJECT IDLETIME over real sockets: the access clock follows the server's injected clock,
// every command that reads or writes a key resets it, and those Redis 7.0.15 looks keys up
// with LOOKUP_NOTOUCH leave it (each checked against redis-server 7.0.15: EXISTS, TYPE,
// TTL/PTTL/EXPIRETIME, OBJECT, MEMORY USAGE, SCAN, WATCH and a script's EXISTS keep it;
// GET, TOUCH, writes, EXEC's and a script's GET, RENAME, COPY and MOVE reset it; SWAPDB
// keeps it).
#include <gtest/gtest.h>

#include <string>

#include "support/embedded_server.h"
#include "support/raw_connection.h"
#include "support/wire_expect.h"

namespace latch::test {
namespace {

std::string IdleOf(RawConnection& c, const std::string& key) {
  return c.Command("OBJECT", "IDLETIME", key);
}

// The access clock moves on the worker's tick (every 100 ms) after the manual clock does.
bool IdleReaches(RawConnection& c, const std::string& key, int seconds) {
  const std::string want = ":" + std::to_string(seconds) + "\r\n";
  return Eventually([&] { return IdleOf(c, key) == want; });
}

Options IdletimeOptions() {
  Options o = EmbeddedServer::DefaultOptions();
  o.enable_debug_command = true;
  return o;
}

TEST(IdletimeWire, ReadsAndWritesResetItAndNoTouchLookupsDoNot) {
  EmbeddedServer server(IdletimeOptions());
  RawConnection c(server.port());
  ASSERT_EQ(c.Command("SET", "k", "v"), "+OK\r\n");
  EXPECT_EQ(IdleOf(c, "k"), ":0\r\n");
  EXPECT_EQ(IdleOf(c, "missing"), "$-1\r\n");
  server.clock().advance(5'000);
  ASSERT_TRUE(IdleReaches(c, "k", 5)) << IdleOf(c, "k");

  // Lookups Redis makes without touching.
  EXPECT_EQ(c.Command("EXISTS", "k"), ":1\r\n");
  EXPECT_EQ(c.Command("TYPE", "k"), "+string\r\n");
  EXPECT_EQ(c.Command("TTL", "k"), ":-1\r\n");
  EXPECT_EQ(c.Command("PTTL", "k"), ":-1\r\n");
  EXPECT_EQ(c.Command("EXPIRETIME", "k"), ":-1\r\n");
  EXPECT_EQ(c.Command("OBJECT", "ENCODING", "k"), Bulk("embstr"));
  EXPECT_EQ(c.Command("MEMORY", "USAGE", "k").front(), ':');
  EXPECT_EQ(c.Command("SCAN", "0", "TYPE", "string").front(), '*');
  EXPECT_EQ(c.Command("EVAL", "return redis.call('EXISTS', KEYS[1])", "1", "k"), ":1\r\n");
  const std::string debug = c.Command("DEBUG", "OBJECT", "k");
  EXPECT_NE(debug.find(" lru_seconds_idle:5\r\n"), std::string::npos) << debug;
  EXPECT_EQ(IdleOf(c, "k"), ":5\r\n");

  // A read resets it; so do TOUCH, a write, and the commands of EXEC and of a script.
  EXPECT_EQ(c.Command("GET", "k"), Bulk("v"));
  EXPECT_EQ(IdleOf(c, "k"), ":0\r\n");
  server.clock().advance(3'000);
  ASSERT_TRUE(IdleReaches(c, "k", 3));
  EXPECT_EQ(c.Command("TOUCH", "k", "missing"), ":1\r\n");
  EXPECT_EQ(IdleOf(c, "k"), ":0\r\n");
  server.clock().advance(2'000);
  ASSERT_TRUE(IdleReaches(c, "k", 2));
  EXPECT_EQ(c.Command("APPEND", "k", "w"), ":2\r\n");
  EXPECT_EQ(IdleOf(c, "k"), ":0\r\n");
  server.clock().advance(2'000);
  ASSERT_TRUE(IdleReaches(c, "k", 2));
  EXPECT_EQ(c.Command("MULTI"), "+OK\r\n");
  EXPECT_EQ(c.Command("STRLEN", "k"), "+QUEUED\r\n");
  EXPECT_EQ(c.Command("EXEC"), "*1\r\n:2\r\n");
  EXPECT_EQ(IdleOf(c, "k"), ":0\r\n");
  server.clock().advance(2'000);
  ASSERT_TRUE(IdleReaches(c, "k", 2));
  EXPECT_EQ(c.Command("EVAL", "return redis.call('GET', KEYS[1])", "1", "k"), Bulk("vw"));
  EXPECT_EQ(IdleOf(c, "k"), ":0\r\n");
  // A new value (SET replaces the object) starts at 0 too.
  server.clock().advance(2'000);
  ASSERT_TRUE(IdleReaches(c, "k", 2));
  EXPECT_EQ(c.Command("SET", "k", "again", "PX", "600000"), "+OK\r\n");
  EXPECT_EQ(IdleOf(c, "k"), ":0\r\n");
}

TEST(IdletimeWire, LockCommandsTouchAndLockInfoDoesNot) {
  EmbeddedServer server;
  RawConnection c(server.port());
  ASSERT_EQ(c.Command("LOCK.ACQUIRE", "lk", "holder", "600000").front(), ':');
  EXPECT_EQ(IdleOf(c, "lk"), ":0\r\n");
  server.clock().advance(4'000);
  ASSERT_TRUE(IdleReaches(c, "lk", 4));
  EXPECT_EQ(c.Command("LOCK.INFO", "lk").front(), '*');
  EXPECT_EQ(IdleOf(c, "lk"), ":4\r\n");
  EXPECT_EQ(c.Command("LOCK.EXTEND", "lk", "holder", "600000"), ":1\r\n");
  EXPECT_EQ(IdleOf(c, "lk"), ":0\r\n");
}

// Each database's keys keep their own idle time; SWAPDB moves keys without touching them,
// RENAME, COPY and MOVE look the source up as a write (so 0) and COPY's copy is new.
TEST(IdletimeWire, DatabasesAndKeyMoves) {
  EmbeddedServer server;
  RawConnection c(server.port());
  for (const char* key : {"a", "r", "cp", "mv"}) ASSERT_EQ(c.Command("SET", key, "v"), "+OK\r\n");
  ASSERT_EQ(c.Command("SELECT", "1"), "+OK\r\n");
  ASSERT_EQ(c.Command("SET", "b", "v"), "+OK\r\n");
  server.clock().advance(4'000);
  ASSERT_TRUE(IdleReaches(c, "b", 4));
  ASSERT_EQ(c.Command("SELECT", "0"), "+OK\r\n");
  for (const char* key : {"a", "r", "cp", "mv"}) ASSERT_TRUE(IdleReaches(c, key, 4)) << key;

  EXPECT_EQ(c.Command("RENAME", "r", "r2"), "+OK\r\n");
  EXPECT_EQ(IdleOf(c, "r2"), ":0\r\n");
  EXPECT_EQ(c.Command("COPY", "cp", "cp2"), ":1\r\n");
  EXPECT_EQ(IdleOf(c, "cp"), ":0\r\n");
  EXPECT_EQ(IdleOf(c, "cp2"), ":0\r\n");
  EXPECT_EQ(c.Command("MOVE", "mv", "1"), ":1\r\n");
  EXPECT_EQ(c.Command("SWAPDB", "0", "1"), "+OK\r\n");
  // db 0 now holds db 1's keys: b untouched, mv just moved.
  EXPECT_EQ(IdleOf(c, "b"), ":4\r\n");
  EXPECT_EQ(IdleOf(c, "mv"), ":0\r\n");
  ASSERT_EQ(c.Command("SELECT", "1"), "+OK\r\n");
  EXPECT_EQ(IdleOf(c, "a"), ":4\r\n");
  EXPECT_EQ(IdleOf(c, "b"), "$-1\r\n");
}

}  // namespace
}  // namespace latch::test
