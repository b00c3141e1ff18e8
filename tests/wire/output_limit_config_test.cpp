// client-output-buffer-limit through CONFIG SET/GET, byte for byte against redis-server
// 7.0.15 (values, units, classes, errors, all-or-nothing), and from latchd's command line.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/embedded_server.h"
#include "support/raw_connection.h"
#include "support/server_process.h"

namespace latch::test {
namespace {

TEST(OutputLimitConfig, SetAndGetAsRedis) {
  RedisServerProcess redis;
  ASSERT_TRUE(redis.ok()) << redis.error();
  EmbeddedServer latchd;
  RawConnection r(redis.port());
  RawConnection l(latchd.port());
  const std::vector<std::string> values = {
      "normal 64mb 16mb 10",
      "normal 0 0 0",
      "replica 1gb 512mb 30 pubsub 1k 2k 3",
      "slave 100 200 300",
      "NORMAL 1kb 1KB 0",
      "normal 0 0",
      "normal 1 2 3 pubsub",
      "master 1 2 3",
      "bogus 1 2 3",
      "normal -1 0 0",
      "normal 1x 0 0",
      "normal 1 2 -3",
      "normal 1 2 3x",
      "normal 5 6 7 bogus 1 2 3",  // nothing changes when any group is bad
      "normal  1 2 3",
      "",
  };
  for (const std::string& v : values) {
    const std::string expected = r.Command("CONFIG", "SET", "client-output-buffer-limit", v);
    EXPECT_EQ(l.Command("CONFIG", "SET", "client-output-buffer-limit", v), expected) << v;
    EXPECT_EQ(l.Command("CONFIG", "GET", "client-output-buffer-limit"),
              r.Command("CONFIG", "GET", "client-output-buffer-limit"))
        << "after " << v;
  }
}

TEST(OutputLimitConfig, CommandLineAndLimitApplies) {
  LatchdProcess latchd({"--client-output-buffer-limit", "normal", "1mb", "512kb", "5"});
  ASSERT_TRUE(latchd.ok()) << latchd.error();
  RawConnection c(latchd.port());
  EXPECT_EQ(c.Command("CONFIG", "GET", "client-output-buffer-limit"),
            "*2\r\n$26\r\nclient-output-buffer-limit\r\n$78\r\n"
            "normal 1048576 524288 5 slave 268435456 67108864 60 pubsub 33554432 8388608 60\r\n");
  LatchdProcess bad({"--client-output-buffer-limit", "normal", "1mb"});
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.Log().find("Wrong number of arguments in buffer limit configuration."),
            std::string::npos)
      << bad.Log();
}

}  // namespace
}  // namespace latch::test
