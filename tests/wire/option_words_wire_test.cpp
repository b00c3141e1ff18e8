// Option words with a NUL byte (issue 24): options are matched by packing up to 8 bytes into
// an integer (commands/arg_parse.h), where a trailing NUL used to vanish, so "NX\0" was taken
// for NX and "NOSAVE\0" for NOSAVE. An option now matches only when its bytes are the
// keyword's. (Redis 7.0 compares options as C strings and takes both for the keyword: a
// deliberate difference, so this is not in the differential corpus.)
#include <gtest/gtest.h>

#include <string>

#include "support/embedded_server.h"
#include "support/raw_connection.h"

namespace latch::test {
namespace {

using namespace std::string_literals;

TEST(OptionWordsWire, AnOptionWithANulByteMatchesNoKeyword) {
  EmbeddedServer server;
  RawConnection c(server.port());
  const std::string syntax = "-ERR syntax error\r\n";
  EXPECT_EQ(c.Command("SET", "k", "v", "NX\0"s), syntax);
  EXPECT_EQ(c.Command("SET", "k", "v", "nx\0"s), syntax);
  EXPECT_EQ(c.Command("SET", "k", "v", "\0"s), syntax);
  EXPECT_EQ(c.Command("SET", "k", "v", "PX\0"s, "100"), syntax);
  EXPECT_EQ(c.Command("GET", "k"), "$-1\r\n") << "SET wrote the key";
  EXPECT_EQ(c.Command("SET", "k", "v", "NX"), "+OK\r\n");
  EXPECT_EQ(c.Command("GETEX", "k", "PERSIST\0"s), syntax);
  EXPECT_EQ(c.Command("EXPIRE", "k", "10", "NX\0"s), "-ERR Unsupported option NX\r\n");
  EXPECT_EQ(c.Command("TTL", "k"), ":-1\r\n");
  EXPECT_EQ(c.Command("ZADD", "z", "1", "a", "2", "b"), ":2\r\n");
  EXPECT_EQ(c.Command("ZADD", "z", "XX\0"s, "5", "c"), syntax);
  EXPECT_EQ(c.Command("ZRANGE", "z", "0", "-1", "REV\0"s), syntax);
  EXPECT_EQ(c.Command("ZUNION", "1", "z", "AGGREGATE", "MAX\0"s), syntax);
  // Not a shutdown: the server answers on.
  EXPECT_EQ(c.Command("SHUTDOWN", "NOSAVE\0"s), syntax);
  EXPECT_EQ(c.Command("PING"), "+PONG\r\n");
}

}  // namespace
}  // namespace latch::test
