// The stats registry over real sockets, against redis-server 7.0 as the reference:
// total_error_replies and INFO errorstats count each error reply once (scripts' and MULTI's
// inner errors as Redis counts them), and CONFIG RESETSTAT zeroes what Redis zeroes.
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "support/embedded_server.h"
#include "support/raw_connection.h"
#include "support/server_process.h"
#include "support/wire_expect.h"

namespace latch::test {
namespace {

using Args = std::vector<std::string>;

// The body of a bulk or verbatim reply ("$n\r\n...\r\n" / "=n\r\ntxt:...\r\n").
std::string BulkBody(const std::string& reply) {
  const auto start = reply.find("\r\n");
  if (start == std::string::npos || reply.size() < start + 4) return "<not a bulk: " + reply + ">";
  return reply.substr(start + 2, reply.size() - start - 4);
}

// TIME on `c`, in milliseconds.
long long ServerTimeMs(RawConnection& c) {
  // *2\r\n$<n>\r\n<seconds>\r\n$<n>\r\n<microseconds>\r\n
  const std::string r = c.Command("TIME");
  const auto seconds_at = r.find("\r\n", r.find('$')) + 2;
  const auto micros_at = r.find("\r\n", r.find('$', seconds_at)) + 2;
  return std::stoll(r.substr(seconds_at)) * 1000 + std::stoll(r.substr(micros_at)) / 1000;
}

std::string Info(RawConnection& c, const std::string& section) {
  return BulkBody(c.Command("INFO", section));
}

// The value of "field:value" in an INFO text, or "<missing>".
std::string Field(const std::string& info, const std::string& field) {
  std::smatch m;
  if (!std::regex_search(info, m, std::regex("(^|\r\n)" + field + ":([^\r]*)\r\n"))) {
    return "<missing>";
  }
  return m[2];
}

// Commands whose errors Redis counts in particular ways; each is sent on its own.
// clang-format off
const std::vector<Args> kErrorMakers = {
    {"SET", "s", "x"},
    {"INCR", "s"},                                                   // ERR
    {"EVAL", "return redis.call('incr','s')", "0"},                  // inner error, once
    {"EVAL", "return redis.pcall('incr','s')", "0"},                 // returned: once
    {"EVAL", "redis.pcall('incr','s'); return 1", "0"},              // discarded: still once
    {"EVAL", "redis.pcall('nosuchcmd'); return 1", "0"},             // refused call: once
    {"EVAL", "return redis.call('get')", "0"},                       // arity, raised: once
    {"EVAL", "return redis.error_reply('MYERR boom')", "0"},         // MYERR
    {"EVAL", "return {err='FOO bar'}", "0"},                         // FOO
    {"EVAL", "return {err='nospace'}", "0"},                         // no code: ERR
    {"EVAL", "error('x')", "0"},                                     // ERR
    {"EVAL", "return {1, redis.error_reply('NESTED e')}", "0"},     // inside an array
    {"EVAL", "return redis.error_reply('C23456789012345678901234567890 x')", "0"},   // 30: kept
    {"EVAL", "return redis.error_reply('C234567890123456789012345678901 x')", "0"},  // 31: ERR
    {"EVAL", "return redis.error_reply('A:B#C x')", "0"},            // shown as A_B_C
    {"NOSUCHCOMMAND"},                                               // rejected: ERR
    {"GET"},                                                         // arity: ERR
    {"GET", "s", "extra"},                                           // arity: ERR
    {"MULTI"}, {"NOSUCHCOMMAND"}, {"EXEC"},                          // ERR, EXECABORT
    {"MULTI"}, {"INCR", "s"}, {"EXEC"},                              // inner ERR in EXEC
    {"EXEC"},                                                        // ERR
    {"WATCH"},                                                       // ERR
};
// clang-format on

void MakeErrors(int port) {
  RawConnection c(port);
  for (const Args& a : kErrorMakers) c.CommandArgs(a);
  // A protocol error is an error reply too (then the connection closes).
  RawConnection bad(port);
  bad.Send("*x\r\n");
  bad.WaitClosed();
}

TEST(StatsWire, ErrorStatsCountedAsRedisCountsThem) {
  RedisServerProcess redis;
  ASSERT_TRUE(redis.ok()) << redis.error();
  EmbeddedServer latchd;
  for (int port : {redis.port(), latchd.port()}) MakeErrors(port);
  RawConnection r(redis.port()), l(latchd.port());
  const std::string want = Info(r, "errorstats");
  EXPECT_EQ(Info(l, "errorstats"), want);
  EXPECT_NE(want.find("errorstat_EXECABORT:count=1\r\n"), std::string::npos) << want;
  const std::string total = Field(Info(r, "stats"), "total_error_replies");
  EXPECT_EQ(Field(Info(l, "stats"), "total_error_replies"), total);
  EXPECT_NE(total, "0");
  // errorstats is a default section, between Replication and Keyspace as in Redis.
  const std::string all = BulkBody(l.Command("INFO"));
  EXPECT_LT(all.find("# Replication"), all.find("# Errorstats")) << all;
  EXPECT_LT(all.find("# Errorstats"), all.find("# Keyspace")) << all;

  for (RawConnection* c : {&r, &l}) {
    ASSERT_EQ(c->Command("CONFIG", "RESETSTAT"), "+OK\r\n");
    EXPECT_EQ(Info(*c, "errorstats"), "# Errorstats\r\n");
    EXPECT_EQ(Field(Info(*c, "stats"), "total_error_replies"), "0");
  }
}

// The counters Redis 7.0's RESETSTAT zeroes, after the same traffic on both servers.
TEST(StatsWire, ResetStatZeroesWhatRedisZeroes) {
  RedisServerProcess redis;
  ASSERT_TRUE(redis.ok()) << redis.error();
  EmbeddedServer latchd;
  const std::vector<std::string> fields = {"total_connections_received",
                                           "total_commands_processed",
                                           "rejected_connections",
                                           "expired_keys",
                                           "keyspace_hits",
                                           "keyspace_misses",
                                           "total_error_replies"};
  std::vector<std::string> after[2];
  int side = 0;
  for (int port : {redis.port(), latchd.port()}) {
    {
      RawConnection other(port);
      ASSERT_EQ(other.Command("SET", "e", "v", "PX", "1"), "+OK\r\n");
      ASSERT_EQ(other.Command("SET", "k", "v"), "+OK\r\n");
    }
    if (port == latchd.port()) {
      latchd.clock().advance(5);
    } else {  // Redis's clock is real: until its TIME is past e's deadline (set before + 1 ms)
      RawConnection clock(port);
      const long long set_by = ServerTimeMs(clock);
      ASSERT_TRUE(Eventually([&] { return ServerTimeMs(clock) > set_by + 1; }));
    }
    RawConnection c(port);
    ASSERT_EQ(c.Command("GET", "e"), "$-1\r\n");  // expired on access
    ASSERT_EQ(c.Command("GET", "k"), "$1\r\nv\r\n");
    c.Command("NOSUCHCOMMAND");
    const std::string before = Info(c, "stats");
    EXPECT_EQ(Field(before, "expired_keys"), "1") << before;
    EXPECT_NE(Field(before, "total_connections_received"), "0") << before;
    ASSERT_EQ(c.Command("CONFIG", "RESETSTAT"), "+OK\r\n");
    const std::string info = Info(c, "stats");
    for (const auto& f : fields) after[side].push_back(f + ":" + Field(info, f));
    ++side;
  }
  EXPECT_EQ(after[1], after[0]);
  EXPECT_EQ(after[0][0], "total_connections_received:0");
  EXPECT_EQ(after[0][3], "expired_keys:0");
}

// What total_commands_processed counts, as Redis 7.0: commands that ran, scripts'
// redis.call and EXEC's queue included; not those refused before running (unknown command
// or subcommand, wrong arity, NOAUTH, a refused EXEC) nor a command's queuing in MULTI.
// clang-format off
const std::vector<Args> kCountedOrNot = {
    {"PING"}, {"NOSUCHCOMMAND"}, {"GET"}, {"GET", "a", "b"}, {"SCRIPT", "NOSUCH"},
    {"EVAL", "redis.call('set','a','1') redis.call('get','a') return 1", "0"},
    {"EVAL", "return redis.pcall('nosuchcommand')", "0"},
    {"EVAL", "return redis.pcall('get')", "0"},
    {"MULTI"}, {"SET", "a", "2"}, {"GET", "a"}, {"EXEC"},
    {"MULTI"}, {"NOSUCHCOMMAND"}, {"EXEC"},
    {"MULTI"}, {"EXEC", "extra"},
    {"MULTI"}, {"MULTI"}, {"DISCARD"},
    {"SET", "s", "x"}, {"INCR", "s"}, {"EXEC"},
    {"CONFIG", "SET", "requirepass", "pw"},
};
// clang-format on

std::string CommandsProcessed(int port) {
  RawConnection c(port);
  EXPECT_EQ(c.Command("CONFIG", "RESETSTAT"), "+OK\r\n");  // counts itself, on both
  for (const Args& a : kCountedOrNot) c.CommandArgs(a);
  RawConnection unauthenticated(port);
  EXPECT_EQ(unauthenticated.Command("GET", "a"), "-NOAUTH Authentication required.\r\n");
  EXPECT_EQ(unauthenticated.Command("EXEC").substr(0, 11), "-EXECABORT ");
  EXPECT_EQ(unauthenticated.Command("AUTH", "wrong").substr(0, 10), "-WRONGPASS");  // counted
  EXPECT_EQ(c.Command("CONFIG", "SET", "requirepass", ""), "+OK\r\n");
  return Field(Info(c, "stats"), "total_commands_processed");
}

TEST(StatsWire, CommandsProcessedCountedAsRedisCountsThem) {
  RedisServerProcess redis;
  ASSERT_TRUE(redis.ok()) << redis.error();
  EmbeddedServer latchd;
  const std::string want = CommandsProcessed(redis.port());
  EXPECT_EQ(want, "23") << "the reference itself";
  EXPECT_EQ(CommandsProcessed(latchd.port()), want);
}

// latchd's own counters (lock counters, protocol errors) are stats too: RESETSTAT zeroes
// them; the gauges (clients, waiters, keys) stay as they are.
TEST(StatsWire, ResetStatZeroesLatchCountersNotGauges) {
  EmbeddedServer latchd;
  RawConnection c(latchd.port());
  ASSERT_EQ(c.Command("LOCK.ACQUIRE", "lk", "me", "30000").substr(0, 1), ":");
  ASSERT_EQ(Field(Info(c, "locks"), "lock_grants"), "1");
  ASSERT_EQ(c.Command("CONFIG", "RESETSTAT"), "+OK\r\n");
  EXPECT_EQ(Field(Info(c, "locks"), "lock_grants"), "0");
  EXPECT_EQ(Field(Info(c, "clients"), "connected_clients"), "1");
  EXPECT_NE(BulkBody(c.Command("INFO", "keyspace")).find("db0:keys=1,"), std::string::npos);
}

}  // namespace
}  // namespace latch::test
