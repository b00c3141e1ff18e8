// Hashes and sorted sets across kill -9 and restart with appendonly yes: the journal's
// MULTI/DEL/HSET|ZADD/PEXPIREAT/EXEC groups (journal/container_records.h) rebuild every
// value, its TTL and exact scores; a rewrite emits them too; redis-check-aof accepts both.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "durability/latchd_child.h"
#include "support/raw_connection.h"

namespace latch::test {
namespace {

std::vector<std::string> Always() { return {"--appendonly", "yes", "--appendfsync", "always"}; }

void Write(RawConnection& c) {
  EXPECT_EQ(c.Command("HSET", "h", "f1", "v1", "f2", "v2"), ":2\r\n");
  EXPECT_EQ(c.Command("HINCRBY", "redisson", "owner:1", "3"), ":3\r\n");
  EXPECT_EQ(c.Command("PEXPIRE", "redisson", "600000"), ":1\r\n");
  EXPECT_EQ(c.Command("HSET", "gone", "f", "v"), ":1\r\n");
  EXPECT_EQ(c.Command("HDEL", "gone", "f"), ":1\r\n");
  EXPECT_EQ(c.Command("ZADD", "z", "1.1", "a", "inf", "b", "-3", "c", "2", "d"), ":4\r\n");
  EXPECT_EQ(c.Command("ZREM", "z", "d"), ":1\r\n");
  EXPECT_EQ(c.Command("ZADD", "moved", "5", "m"), ":1\r\n");
  EXPECT_EQ(c.Command("RENAME", "moved", "target"), "+OK\r\n");
  EXPECT_EQ(c.Command("ZADD", "short", "1", "x"), ":1\r\n");
  EXPECT_EQ(c.Command("PEXPIRE", "short", "1"), ":1\r\n");
}

void Check(RawConnection& c) {
  EXPECT_EQ(c.Command("HGETALL", "h"), "*4\r\n$2\r\nf1\r\n$2\r\nv1\r\n$2\r\nf2\r\n$2\r\nv2\r\n");
  EXPECT_EQ(c.Command("HGET", "redisson", "owner:1"), "$1\r\n3\r\n");
  const std::string pttl = c.Command("PTTL", "redisson");
  ASSERT_EQ(pttl[0], ':');
  EXPECT_GT(std::stoll(pttl.substr(1)), 500000);
  EXPECT_EQ(c.Command("EXISTS", "gone"), ":0\r\n");
  EXPECT_EQ(c.Command("ZRANGE", "z", "0", "-1", "WITHSCORES"),
            "*6\r\n$1\r\nc\r\n$2\r\n-3\r\n$1\r\na\r\n$18\r\n1.1000000000000001\r\n$1\r\nb\r\n"
            "$3\r\ninf\r\n");
  EXPECT_EQ(c.Command("TYPE", "target"), "+zset\r\n");
  EXPECT_EQ(c.Command("EXISTS", "moved", "short"), ":0\r\n");
}

void ExpectAofValid(const LatchdChild& s) {
  std::string out;
  EXPECT_EQ(RunCommand("redis-check-aof " + s.aof_dir() + "/appendonly.aof.manifest", &out), 0)
      << out;
  EXPECT_NE(out.find("All AOF files and manifest are valid"), std::string::npos) << out;
}

TEST(ContainerRestartTest, HashesAndSortedSetsSurviveKill9AndRewrite) {
  LatchdChild s(Always());
  ASSERT_TRUE(s.Start()) << s.Log();
  {
    RawConnection c(s.port());
    Write(c);
  }
  s.Kill9();
  ExpectAofValid(s);
  ASSERT_TRUE(s.Start()) << s.Log();
  {
    RawConnection c(s.port());
    Check(c);
    EXPECT_EQ(c.Command("BGREWRITEAOF"), "+Background append only file rewriting started\r\n");
    for (int i = 0; i < 200; ++i) {
      if (c.Command("INFO", "persistence").find("aof_rewrite_in_progress:0") !=
          std::string::npos) {
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  s.Kill9();
  ExpectAofValid(s);
  ASSERT_TRUE(s.Start()) << s.Log();
  RawConnection c(s.port());
  Check(c);
}

}  // namespace
}  // namespace latch::test
