// maxmemory (noeviction) over real sockets: a limit just above what the server uses fills
// up with real locks until SET and LOCK.ACQUIRE are refused with Redis's -OOM, while reads,
// releases and deletes keep working and free room again; EXEC of a transaction holding a
// growing command is discarded whole; eviction policies are refused. The byte-for-byte
// comparison with Redis (maxmemory 1) is corpus/maxmemory.txt.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "support/embedded_server.h"
#include "support/raw_connection.h"

namespace latch::test {
namespace {

constexpr const char* kOom = "-OOM command not allowed when used memory > 'maxmemory'.\r\n";

std::int64_t MaxmemoryInfoField(RawConnection& c, const std::string& field) {
  const std::string info = c.Command("INFO", "memory");
  const auto pos = info.find("\r\n" + field + ":");
  if (pos == std::string::npos) return -1;
  return std::stoll(info.substr(pos + field.size() + 3));
}

TEST(MaxmemoryWire, FillsUpThenRefusesGrowingCommandsAndRecoversAfterDeletes) {
  EmbeddedServer server;
  RawConnection c(server.port());
  const std::int64_t used = MaxmemoryInfoField(c, "used_memory");
  ASSERT_GT(used, 0);
  // 2 MB of room: the slab's pages and the index grow with every key.
  const std::int64_t limit = used + 2 * 1024 * 1024;
  ASSERT_EQ(c.Command("CONFIG", "SET", "maxmemory", std::to_string(limit)), "+OK\r\n");
  EXPECT_EQ(MaxmemoryInfoField(c, "maxmemory"), limit);

  const std::string token(22, 't');
  int stored = 0;
  std::string refused;
  for (int i = 0; i < 200000; ++i) {
    const std::string reply =
        c.Command("SET", "lock:" + std::to_string(i), token, "NX", "PX", "600000");
    if (reply != "+OK\r\n") {
      refused = reply;
      break;
    }
    ++stored;
  }
  ASSERT_EQ(refused, kOom) << "after " << stored << " locks";
  // Each lock costs well under 200 bytes here, so 2 MB hold more than 10000 of them.
  EXPECT_GT(stored, 10000);
  // The slabs are counted live, the heap (where the index grows) as of the last refresh, at
  // most 100 ms old: a burst can pass the limit by what the heap grew meanwhile.
  EXPECT_LE(MaxmemoryInfoField(c, "used_memory"), limit + 512 * 1024) << "stops near the limit";

  EXPECT_EQ(c.Command("LOCK.ACQUIRE", "lock:new", "owner", "10000"), kOom);
  EXPECT_EQ(c.Command("INCR", "counter"), kOom);
  EXPECT_EQ(c.Command("GET", "lock:0"), "$22\r\n" + token + "\r\n") << "reads still work";
  EXPECT_EQ(c.Command("PEXPIRE", "lock:1", "5000"), ":1\r\n") << "TTL changes still work";
  EXPECT_EQ(c.Command("EVAL",
                      "if redis.call('get', KEYS[1]) == ARGV[1] then return "
                      "redis.call('del', KEYS[1]) else return 0 end",
                      "1", "lock:2", token),
            ":1\r\n")
      << "the unlock script still runs";

  // Releasing a few thousand locks makes room again.
  for (int i = 3; i < 4003; ++i) {
    ASSERT_EQ(c.Command("DEL", "lock:" + std::to_string(i)), ":1\r\n");
  }
  EXPECT_EQ(c.Command("SET", "lock:again", token, "NX", "PX", "600000"), "+OK\r\n");
  const std::string granted = c.Command("LOCK.ACQUIRE", "lock:new", "owner", "10000");
  EXPECT_EQ(granted.substr(0, 1), ":") << granted;
  EXPECT_EQ(c.Command("LOCK.RELEASE", "lock:new", "owner"), ":1\r\n");

  ASSERT_EQ(c.Command("CONFIG", "SET", "maxmemory", "0"), "+OK\r\n");
  EXPECT_EQ(c.Command("INCR", "counter"), ":1\r\n");
}

TEST(MaxmemoryWire, ExecOfAGrowingTransactionIsDiscardedWhole) {
  EmbeddedServer server;
  RawConnection tx(server.port()), admin(server.port());
  ASSERT_EQ(tx.Command("SET", "k", "before"), "+OK\r\n");
  ASSERT_EQ(tx.Command("MULTI"), "+OK\r\n");
  ASSERT_EQ(tx.Command("SET", "k", "after"), "+QUEUED\r\n");
  ASSERT_EQ(admin.Command("CONFIG", "SET", "maxmemory", "1"), "+OK\r\n");
  EXPECT_EQ(tx.Command("EXEC"),
            "-EXECABORT Transaction discarded because of: OOM command not allowed when used "
            "memory > 'maxmemory'.\r\n");
  EXPECT_EQ(tx.Command("EXEC"), "-ERR EXEC without MULTI\r\n") << "the transaction is gone";
  EXPECT_EQ(tx.Command("GET", "k"), "$6\r\nbefore\r\n");
  // A transaction of reads and deletes queued before the limit still runs.
  ASSERT_EQ(admin.Command("CONFIG", "SET", "maxmemory", "0"), "+OK\r\n");
  ASSERT_EQ(tx.Command("MULTI"), "+OK\r\n");
  ASSERT_EQ(tx.Command("GET", "k"), "+QUEUED\r\n");
  ASSERT_EQ(tx.Command("DEL", "k"), "+QUEUED\r\n");
  ASSERT_EQ(admin.Command("CONFIG", "SET", "maxmemory", "1"), "+OK\r\n");
  EXPECT_EQ(tx.Command("EXEC"), "*2\r\n$6\r\nbefore\r\n:1\r\n");
  ASSERT_EQ(admin.Command("CONFIG", "SET", "maxmemory", "0"), "+OK\r\n");
}

TEST(MaxmemoryWire, OnlyNoevictionIsAccepted) {
  EmbeddedServer server;
  RawConnection c(server.port());
  EXPECT_EQ(c.Command("CONFIG", "GET", "maxmemory-policy"),
            "*2\r\n$16\r\nmaxmemory-policy\r\n$10\r\nnoeviction\r\n");
  EXPECT_EQ(c.Command("CONFIG", "SET", "maxmemory-policy", "NOEVICTION"), "+OK\r\n");
  EXPECT_EQ(c.Command("CONFIG", "SET", "maxmemory-policy", "allkeys-lru"),
            "-ERR CONFIG SET failed (possibly related to argument 'maxmemory-policy') - latchd "
            "never evicts keys (an evicted lock is a lost lock): only noeviction is supported\r\n");
  const std::string bad = c.Command("CONFIG", "SET", "maxmemory-policy", "sometimes");
  EXPECT_NE(bad.find("argument(s) must be one of the following: volatile-lru"),
            std::string::npos)
      << bad;
  EXPECT_EQ(c.Command("CONFIG", "SET", "maxmemory", "-1"),
            "-ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument must "
            "be a memory value\r\n");
}

}  // namespace
}  // namespace latch::test
