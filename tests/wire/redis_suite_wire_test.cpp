// Behaviours Redis's own test files (tests/unit/*.tcl, docs/REDIS_TESTS.md) found different
// and that the differential corpus cannot drive: they need DEBUG (off in the corpus's
// embedded server) or a key left stale by a stopped active expiry.
#include <gtest/gtest.h>

#include <string>

#include "support/embedded_server.h"
#include "support/raw_connection.h"
#include "support/tick_probe.h"
#include "support/wire_expect.h"

namespace latch::test {
namespace {

Options SuiteOptionsWithDebug() {
  Options o = EmbeddedServer::DefaultOptions();
  o.enable_debug_command = true;
  return o;
}

TEST(RedisSuiteWire, SetActiveExpireStopsAndRestartsActiveExpiry) {
  Options o = SuiteOptionsWithDebug();
  o.io_threads = 1;  // the tick the probe sees has also passed over x's shard (tick_probe.h)
  EmbeddedServer server(o);
  TickProbe tick(server.port());
  ASSERT_TRUE(tick.ok());
  RawConnection c(server.port());
  ASSERT_EQ(c.Command("DEBUG", "SET-ACTIVE-EXPIRE", "0"), "+OK\r\n");
  ASSERT_EQ(c.Command("SET", "x", "v", "PX", "1"), "+OK\r\n");
  server.clock().advance(1000);  // a whole second: what the probe can see
  ASSERT_TRUE(tick.SawSecondsPass(1)) << tick.last_reply();
  EXPECT_EQ(c.Command("DBSIZE"), ":1\r\n") << "stale, not removed in the background";
  ASSERT_EQ(c.Command("DEBUG", "SET-ACTIVE-EXPIRE", "1"), "+OK\r\n");
  EXPECT_TRUE(Eventually([&] { return c.Command("DBSIZE") == ":0\r\n"; }))
      << "not removed once active expiry runs again";
}

// As Redis (multi.tcl, "WATCH stale keys should not fail EXEC" and the two after it):
// watching a key that had already expired, then seeing it removed (by the WATCH's own
// lookup, EXISTS or FLUSHDB), is not a change.
TEST(RedisSuiteWire, WatchingAStaleKeyDoesNotAbortExec) {
  EmbeddedServer server(SuiteOptionsWithDebug());
  RawConnection c(server.port());
  ASSERT_EQ(c.Command("DEBUG", "SET-ACTIVE-EXPIRE", "0"), "+OK\r\n");
  for (const char* then : {"", "EXISTS", "FLUSHDB"}) {
    ASSERT_EQ(c.Command("SET", "x", "foo", "PX", "1"), "+OK\r\n");
    server.clock().advance(2);
    ASSERT_EQ(c.Command("WATCH", "x"), "+OK\r\n");
    if (std::string(then) == "EXISTS") {
      ASSERT_EQ(c.Command("EXISTS", "x"), ":0\r\n");
    }
    if (std::string(then) == "FLUSHDB") {
      ASSERT_EQ(c.Command("FLUSHDB"), "+OK\r\n");
    }
    ASSERT_EQ(c.Command("MULTI"), "+OK\r\n");
    ASSERT_EQ(c.Command("PING"), "+QUEUED\r\n");
    EXPECT_EQ(c.Command("EXEC"), "*1\r\n+PONG\r\n") << "then: " << then;
  }
  // A key live at WATCH that expires before EXEC still aborts it.
  ASSERT_EQ(c.Command("SET", "x", "foo", "PX", "10"), "+OK\r\n");
  ASSERT_EQ(c.Command("WATCH", "x"), "+OK\r\n");
  server.clock().advance(20);
  ASSERT_EQ(c.Command("MULTI"), "+OK\r\n");
  ASSERT_EQ(c.Command("PING"), "+QUEUED\r\n");
  EXPECT_EQ(c.Command("EXEC"), "*-1\r\n");
}

// incr.tcl "INCR can modify objects in-place" and hash.tcl "Is a ziplist encoded Hash
// promoted on big payload?" read DEBUG OBJECT's address and encoding.
TEST(RedisSuiteWire, DebugObjectShowsTheBlockAndTheEncoding) {
  EmbeddedServer server(SuiteOptionsWithDebug());
  RawConnection c(server.port());
  ASSERT_EQ(c.Command("SET", "foo", "20000"), "+OK\r\n");
  ASSERT_EQ(c.Command("INCR", "foo"), ":20001\r\n");
  const std::string before = c.Command("DEBUG", "OBJECT", "foo");
  ASSERT_EQ(before.substr(0, 10), "+Value at:") << before;
  EXPECT_NE(before.find(" refcount:1 encoding:int serializedlength:5 "), std::string::npos)
      << before;
  ASSERT_EQ(c.Command("INCR", "foo"), ":20002\r\n");
  const std::string after = c.Command("DEBUG", "OBJECT", "foo");
  EXPECT_EQ(after.substr(0, after.find(' ', 7)), before.substr(0, before.find(' ', 7)))
      << "rewritten in its block";
  ASSERT_EQ(c.Command("HSET", "h", "f", std::string(1024, 'a')), ":1\r\n");
  EXPECT_NE(c.Command("DEBUG", "OBJECT", "h").find(" encoding:hashtable "), std::string::npos);
  EXPECT_EQ(c.Command("DEBUG", "OBJECT", "nokey"), "-ERR no such key\r\n");
}

}  // namespace
}  // namespace latch::test
