// The operator's commands over real sockets against the embedded server (issue 11) where
// behaviour, not just a reply shape, is at stake: CLIENT PAUSE holding expiry, the LATENCY
// monitor, OBJECT IDLETIME's access clock, MEMORY STATS/DOCTOR.
#include <gtest/gtest.h>

#include <chrono>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "support/embedded_server.h"
#include "support/raw_connection.h"
#include "support/wire_expect.h"

namespace latch::test {
namespace {

using namespace std::chrono_literals;

// Redis holds expiry while clients are paused: a lock whose lease ends during CLIENT PAUSE
// WRITE reads as missing but is not deleted, so its parked waiter is not handed it until
// the pause ends (the old lazy expiry deleted it on the GET and granted the waiter).
TEST(OperatorWire, PauseWriteHoldsExpiryFromLockWaiters) {
  EmbeddedServer server;
  RawConnection admin(server.port());
  RawConnection waiter(server.port(), 300ms);
  ASSERT_EQ(admin.Command("LOCK.ACQUIRE", "pk", "holder", "100").front(), ':');
  ASSERT_TRUE(waiter.Send(RawConnection::Encode({"LOCK.ACQUIRE", "pk", "w", "5000", "WAIT", "0"})));
  ASSERT_TRUE(Eventually([&] { return InfoField(admin, "clients", "blocked_clients") == "1"; }));
  ASSERT_EQ(admin.Command("CLIENT", "PAUSE", "100000", "WRITE"), "+OK\r\n");
  server.clock().advance(200);  // the lease is over, the pause is not
  EXPECT_EQ(admin.Command("GET", "pk"), "$-1\r\n");
  EXPECT_EQ(admin.Command("EXISTS", "pk"), ":0\r\n");
  EXPECT_EQ(admin.Command("PTTL", "pk"), ":-2\r\n");
  EXPECT_EQ(waiter.ReadReply(), std::nullopt) << "a paused server handed the lock over";
  EXPECT_EQ(InfoField(admin, "stats", "expired_keys"), "0");
  EXPECT_EQ(admin.Command("DBSIZE"), ":1\r\n");  // still stored, as in Redis
  ASSERT_EQ(admin.Command("CLIENT", "UNPAUSE"), "+OK\r\n");
  // The next lookup (or the expiry tick) expires the key and grants the waiter.
  EXPECT_TRUE(Eventually([&] { return admin.Command("GET", "pk") == Bulk("w"); }));
  auto granted = waiter.ReadReply();
  ASSERT_TRUE(granted.has_value());
  EXPECT_EQ(granted->front(), ':');
  EXPECT_EQ(InfoField(admin, "stats", "expired_keys"), "1");
}

// A WRITE pause postpones what Redis 7.0 flags may-replicate besides writes: PUBLISH and
// FCALL (checked against redis-server 7.0.15), until CLIENT UNPAUSE.
TEST(OperatorWire, PauseWritePostponesPublishAndFcall) {
  EmbeddedServer server;
  RawConnection admin(server.port());
  RawConnection c(server.port(), 300ms);
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"PUBLISH", "ch", "x"}, ":0\r\n"},
      {{"FCALL", "nosuch", "0"}, "-ERR Function not found\r\n"},
  };
  for (const auto& [command, reply] : cases) {
    ASSERT_EQ(admin.Command("CLIENT", "PAUSE", "100000", "WRITE"), "+OK\r\n");
    ASSERT_TRUE(c.Send(RawConnection::Encode(command)));
    EXPECT_EQ(c.ReadReply(), std::nullopt) << command[0] << " ran during the pause";
    ASSERT_EQ(admin.Command("CLIENT", "UNPAUSE"), "+OK\r\n");
    EXPECT_EQ(c.ReadReply(), reply) << command[0];
  }
}

Options OperatorWithDebug() {
  Options o = EmbeddedServer::DefaultOptions();
  o.enable_debug_command = true;
  return o;
}

// The latency monitor over the wire with a really slow command (DEBUG SLEEP): nothing is
// recorded while latency-monitor-threshold is 0; then LATEST, HISTORY (one sample per
// second, the worst of it), DOCTOR, GRAPH and RESET answer in Redis's shapes.
TEST(OperatorWire, LatencyMonitorRecordsSlowCommands) {
  EmbeddedServer server(OperatorWithDebug());
  RawConnection c(server.port());
  EXPECT_EQ(c.Command("CONFIG", "GET", "latency-monitor-threshold"),
            "*2\r\n$25\r\nlatency-monitor-threshold\r\n$1\r\n0\r\n");
  ASSERT_EQ(c.Command("DEBUG", "SLEEP", "0.03"), "+OK\r\n");
  EXPECT_EQ(c.Command("LATENCY", "LATEST"), "*0\r\n") << "recorded while off";
  EXPECT_NE(c.Command("LATENCY", "DOCTOR").find("Latency monitoring is disabled"),
            std::string::npos);

  ASSERT_EQ(c.Command("CONFIG", "SET", "latency-monitor-threshold", "20"), "+OK\r\n");
  EXPECT_NE(c.Command("LATENCY", "DOCTOR").find("no latency spike was observed"),
            std::string::npos);
  ASSERT_EQ(c.Command("PING"), "+PONG\r\n");  // fast and quick: no sample
  ASSERT_EQ(c.Command("DEBUG", "SLEEP", "0.03"), "+OK\r\n");
  ASSERT_EQ(c.Command("DEBUG", "SLEEP", "0.05"), "+OK\r\n");  // same second: raises it
  const std::string latest = c.Command("LATENCY", "LATEST");
  std::smatch m;
  ASSERT_TRUE(std::regex_match(
      latest, m,
      std::regex("\\*1\r\n\\*4\r\n\\$7\r\ncommand\r\n:1700000000\r\n:([0-9]+)\r\n:([0-9]+)\r\n")))
      << latest;
  EXPECT_GE(std::stoi(m[1]), 50);
  EXPECT_EQ(m[1], m[2]);
  server.clock().advance(1000);
  ASSERT_EQ(c.Command("DEBUG", "SLEEP", "0.03"), "+OK\r\n");
  const std::string history = c.Command("LATENCY", "HISTORY", "command");
  ASSERT_TRUE(std::regex_match(history, std::regex("\\*2\r\n\\*2\r\n:1700000000\r\n:[0-9]+\r\n"
                                                   "\\*2\r\n:1700000001\r\n:[0-9]+\r\n")))
      << history;
  EXPECT_EQ(c.Command("LATENCY", "HISTORY", "expire-cycle"), "*0\r\n");
  EXPECT_NE(c.Command("LATENCY", "DOCTOR").find("1. command: 2 spikes"), std::string::npos);
  EXPECT_EQ(c.Command("LATENCY", "GRAPH", "nosuch"),
            "-ERR No samples available for event 'nosuch'\r\n");
  EXPECT_EQ(c.Command("LATENCY", "GRAPH", "command").substr(0, 38),
            "-ERR LATENCY GRAPH is not supported by");
  EXPECT_EQ(c.Command("LATENCY", "RESET", "nosuch"), ":0\r\n");
  EXPECT_EQ(c.Command("LATENCY", "RESET"), ":1\r\n");
  EXPECT_EQ(c.Command("LATENCY", "LATEST"), "*0\r\n");
}

// The integer value of `name` in MEMORY STATS's RESP2 reply (a flat array), -1 if absent.
long long OperatorStatOf(const std::string& reply, const std::string& name) {
  const std::string tag = "$" + std::to_string(name.size()) + "\r\n" + name + "\r\n:";
  const auto pos = reply.find(tag);
  if (pos == std::string::npos) return -1;
  return std::stoll(reply.substr(pos + tag.size()));
}

// MEMORY STATS in Redis 7.0's shape, with real numbers that follow the keys; MEMORY DOCTOR
// and MALLOC-STATS answer.
TEST(OperatorWire, MemoryStatsFollowTheKeys) {
  EmbeddedServer server;
  RawConnection c(server.port());
  std::string stats = c.Command("MEMORY", "STATS");
  ASSERT_EQ(stats.substr(0, 26), "*54\r\n$14\r\npeak.allocated\r\n") << stats;
  EXPECT_EQ(OperatorStatOf(stats, "keys.count"), 0);
  EXPECT_EQ(stats.find("db.0"), std::string::npos);
  for (int i = 0; i < 2000; ++i) {
    ASSERT_EQ(c.Command("SET", "key:" + std::to_string(i), std::string(100, 'v')), "+OK\r\n");
  }
  stats = c.Command("MEMORY", "STATS");
  ASSERT_EQ(stats.substr(0, 5), "*56\r\n") << stats;
  EXPECT_EQ(OperatorStatOf(stats, "keys.count"), 2000);
  const long long total = OperatorStatOf(stats, "total.allocated");
  EXPECT_GE(OperatorStatOf(stats, "peak.allocated"), total);
  EXPECT_GT(total - OperatorStatOf(stats, "startup.allocated"), 2000 * 100);
  EXPECT_GT(OperatorStatOf(stats, "keys.bytes-per-key"), 100);
  EXPECT_GT(OperatorStatOf(stats, "overhead.hashtable.main"), 2000 * 8 - 1);
  EXPECT_GT(OperatorStatOf(stats, "allocator.resident"), 0);
  EXPECT_NE(stats.find("$18\r\ndataset.percentage\r\n$"), std::string::npos) << stats;
  EXPECT_NE(c.Command("MEMORY", "DOCTOR").find("Sam"), std::string::npos);
  EXPECT_NE(c.Command("MEMORY", "MALLOC-STATS").find("<malloc version="), std::string::npos);
  EXPECT_EQ(c.Command("MEMORY", "PURGE"), "+OK\r\n");
  EXPECT_EQ(c.Command("MEMORY", "STATS", "x"),
            "-ERR wrong number of arguments for 'memory|stats' command\r\n");
}

}  // namespace
}  // namespace latch::test
