// Hashes and sorted sets across kill -9 and restart with appendonly yes: the journal's
// MULTI/DEL/HSET|ZADD/PEXPIREAT/EXEC groups (journal/container_records.h) rebuild every
// value, its TTL and exact scores; a rewrite emits them too; redis-check-aof accepts both.
#include <gtest/gtest.h>

#include <string>

#include "durability/latchd_child.h"
#include "support/raw_connection.h"

namespace latch::test {
namespace {

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
  LatchdChild s(AppendfsyncAlways());
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
    WaitForInfo(s.port(), "aof_rewrite_in_progress:0");  // then the kill -9 below
  }
  s.Kill9();
  ExpectAofValid(s);
  ASSERT_TRUE(s.Start()) << s.Log();
  RawConnection c(s.port());
  Check(c);
}

}  // namespace
}  // namespace latch::test

namespace latch::test {
namespace {

// Databases (issue 17): the journal writes SELECT n before a record of another database than
// the record before, the loader follows it (and SWAPDB), and a rewrite writes each
// database's keys after its SELECT. Keys, a lock with its token, a hash and a TTL in db 3
// survive kill -9; redis-check-aof accepts every file.
void WriteDatabases(RawConnection& c, std::string* token) {
  EXPECT_EQ(c.Command("SET", "zero", "0"), "+OK\r\n");
  EXPECT_EQ(c.Command("SELECT", "3"), "+OK\r\n");
  EXPECT_EQ(c.Command("SET", "three", "3"), "+OK\r\n");
  EXPECT_EQ(c.Command("SET", "ttl", "x", "PX", "600000"), "+OK\r\n");
  EXPECT_EQ(c.Command("HSET", "h", "f", "v"), ":1\r\n");
  *token = c.Command("LOCK.ACQUIRE", "lock", "owner", "600000");
  EXPECT_EQ((*token)[0], ':') << *token;
  EXPECT_EQ(c.Command("SELECT", "5"), "+OK\r\n");
  EXPECT_EQ(c.Command("SET", "five", "5"), "+OK\r\n");
  EXPECT_EQ(c.Command("SET", "moving", "m"), "+OK\r\n");
  EXPECT_EQ(c.Command("MOVE", "moving", "0"), ":1\r\n");
  EXPECT_EQ(c.Command("SWAPDB", "5", "6"), "+OK\r\n");  // five is in db 6 now
  EXPECT_EQ(c.Command("SELECT", "7"), "+OK\r\n");
  EXPECT_EQ(c.Command("SET", "flushed", "f"), "+OK\r\n");
  EXPECT_EQ(c.Command("FLUSHDB"), "+OK\r\n");
}

void CheckDatabases(RawConnection& c, const std::string& token) {
  EXPECT_EQ(c.Command("GET", "zero"), "$1\r\n0\r\n");
  EXPECT_EQ(c.Command("GET", "moving"), "$1\r\nm\r\n");
  EXPECT_EQ(c.Command("DBSIZE"), ":2\r\n");
  EXPECT_EQ(c.Command("SELECT", "3"), "+OK\r\n");
  EXPECT_EQ(c.Command("DBSIZE"), ":4\r\n");
  EXPECT_EQ(c.Command("GET", "three"), "$1\r\n3\r\n");
  EXPECT_EQ(c.Command("HGET", "h", "f"), "$1\r\nv\r\n");
  const std::string pttl = c.Command("PTTL", "ttl");
  ASSERT_EQ(pttl[0], ':');
  EXPECT_GT(std::stoll(pttl.substr(1)), 500000);
  const std::string info = c.Command("LOCK.INFO", "lock");
  EXPECT_NE(info.find(token), std::string::npos) << info;  // the same fencing token
  EXPECT_EQ(c.Command("SELECT", "5"), "+OK\r\n");
  EXPECT_EQ(c.Command("DBSIZE"), ":0\r\n");
  EXPECT_EQ(c.Command("SELECT", "6"), "+OK\r\n");
  EXPECT_EQ(c.Command("GET", "five"), "$1\r\n5\r\n");
  EXPECT_EQ(c.Command("SELECT", "7"), "+OK\r\n");
  EXPECT_EQ(c.Command("DBSIZE"), ":0\r\n");
}

TEST(ContainerRestartTest, DatabasesSurviveKill9AndRewrite) {
  LatchdChild s(AppendfsyncAlways());
  ASSERT_TRUE(s.Start()) << s.Log();
  std::string token;
  {
    RawConnection c(s.port());
    WriteDatabases(c, &token);
  }
  s.Kill9();
  ExpectAofValid(s);
  std::string journal;
  RunCommand("cat " + s.aof_dir() + "/*.incr.aof", &journal);
  EXPECT_NE(journal.find("*2\r\n$6\r\nSELECT\r\n$1\r\n3\r\n"), std::string::npos) << journal;
  EXPECT_NE(journal.find("*3\r\n$6\r\nSWAPDB\r\n$1\r\n5\r\n$1\r\n6\r\n"), std::string::npos);
  ASSERT_TRUE(s.Start()) << s.Log();
  {
    RawConnection c(s.port());
    CheckDatabases(c, token);
    EXPECT_EQ(c.Command("BGREWRITEAOF"), "+Background append only file rewriting started\r\n");
    WaitForInfo(s.port(), "aof_rewrite_in_progress:0");  // then the kill -9 below
  }
  s.Kill9();
  ExpectAofValid(s);
  ASSERT_TRUE(s.Start()) << s.Log();
  RawConnection c(s.port());
  CheckDatabases(c, token);
}

}  // namespace
}  // namespace latch::test
