// GET /metrics (Prometheus text format) over real sockets: the numbers follow what clients
// do, HTTP/1.1 keep-alive and HEAD work, anything else gets a 4xx and bad input never stops
// the RESP side.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "support/embedded_server.h"
#include "support/free_port.h"
#include "support/raw_connection.h"

namespace latch::test {
namespace {

struct MetricsServer {
  static Options WithMetrics() {
    Options o = EmbeddedServer::DefaultOptions();
    o.metrics_port = FreePort();
    return o;
  }
  EmbeddedServer server{WithMetrics()};
  int port() { return server.server().metrics_port(); }
};

// Sends raw HTTP bytes and returns everything the server wrote until it closed.
std::string Http(int port, const std::string& request) {
  RawConnection conn(port);
  if (!conn.connected()) return "<no connection: " + conn.error() + ">";
  if (!conn.Send(request)) return "<send failed: " + conn.error() + ">";
  std::string response;
  if (!conn.WaitClosed(&response)) return "<not closed: " + response + ">";
  return response;
}

std::string Get(int port, const std::string& path) {
  return Http(port, "GET " + path + " HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
}

// The value of one sample line "name value", or -1.
long long Sample(const std::string& text, const std::string& name) {
  std::smatch m;
  if (!std::regex_search(text, m, std::regex("\n" + name + " ([0-9.]+)\n"))) return -1;
  return std::stoll(m[1]);
}

TEST(MetricsWire, OffUnlessConfigured) {
  EmbeddedServer server;
  EXPECT_EQ(server.server().metrics_port(), 0);
}

TEST(MetricsWire, NumbersFollowTheClients) {
  MetricsServer m;
  ASSERT_GT(m.port(), 0);
  RawConnection c(m.server.port());
  ASSERT_EQ(c.Command("SET", "a", "1"), "+OK\r\n");
  ASSERT_EQ(c.Command("SET", "b", "2", "PX", "100"), "+OK\r\n");
  ASSERT_EQ(c.Command("LOCK.ACQUIRE", "lk", "owner-1", "30000").substr(0, 1), ":");
  ASSERT_EQ(c.Command("GET", "missing"), "$-1\r\n");

  std::string r = Get(m.port(), "/metrics");
  ASSERT_EQ(r.substr(0, 17), "HTTP/1.1 200 OK\r\n") << r;
  EXPECT_NE(r.find("Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"),
            std::string::npos) << r;
  EXPECT_NE(r.find("# TYPE latch_commands_processed_total counter\n"), std::string::npos);
  EXPECT_EQ(Sample(r, "latch_commands_processed_total"), 4) << r;
  EXPECT_EQ(Sample(r, "latch_connected_clients"), 1) << r;
  EXPECT_EQ(Sample(r, "latch_keys"), 3) << r;
  EXPECT_EQ(Sample(r, "latch_keys_with_ttl"), 2) << r;
  EXPECT_EQ(Sample(r, "latch_lock_grants_total"), 1) << r;
  EXPECT_EQ(Sample(r, "latch_keyspace_misses_total"), 1) << r;
  EXPECT_EQ(Sample(r, "latch_expired_keys_total"), 0) << r;

  m.server.clock().advance(101);  // b expires; the next lookup reclaims it
  ASSERT_EQ(c.Command("GET", "b"), "$-1\r\n");
  r = Get(m.port(), "/metrics?ignored=1");
  EXPECT_EQ(Sample(r, "latch_expired_keys_total"), 1) << r;
  EXPECT_EQ(Sample(r, "latch_keys"), 2) << r;
  EXPECT_EQ(Sample(r, "latch_commands_processed_total"), 5) << r;
}

// latch_locks_held follows the keys that carry a LOCK.ACQUIRE token through every way a key
// changes: an overwrite keeps the lock (docs/LOCKS.md), a DEL, an expiry, a RENAME onto
// another lock and a FLUSHALL end it. (It used to count a SET over a lock as a new one.)
TEST(MetricsWire, LocksHeldFollowsTheKeys) {
  MetricsServer m;
  RawConnection c(m.server.port());
  for (const char* k : {"a", "b", "c", "d", "e"}) {
    ASSERT_EQ(c.Command("LOCK.ACQUIRE", k, "owner", "30000").substr(0, 1), ":") << k;
  }
  auto held = [&] { return Sample(Get(m.port(), "/metrics"), "latch_locks_held"); };
  EXPECT_EQ(held(), 5);
  ASSERT_EQ(c.Command("SET", "a", "plain"), "+OK\r\n");
  ASSERT_EQ(c.Command("SET", "a", "longer value than the block had room for, reallocated"),
            "+OK\r\n");
  ASSERT_EQ(c.Command("APPEND", "a", "x").substr(0, 1), ":");
  EXPECT_EQ(held(), 5) << "an overwrite is not a new lock";
  ASSERT_EQ(c.Command("DEL", "b"), ":1\r\n");
  EXPECT_EQ(held(), 4);
  ASSERT_EQ(c.Command("RENAME", "c", "c2"), "+OK\r\n");
  EXPECT_EQ(held(), 4);
  ASSERT_EQ(c.Command("RENAME", "c2", "d"), "+OK\r\n");  // d stays a lock, c2 is gone
  EXPECT_EQ(held(), 3);
  ASSERT_EQ(c.Command("PEXPIRE", "e", "10"), ":1\r\n");
  m.server.clock().advance(20);
  ASSERT_EQ(c.Command("GET", "e"), "$-1\r\n");
  EXPECT_EQ(held(), 2);
  ASSERT_EQ(c.Command("FLUSHALL"), "+OK\r\n");
  EXPECT_EQ(held(), 0);
  ASSERT_EQ(c.Command("LOCK.ACQUIRE", "f", "owner", "30000").substr(0, 1), ":");
  EXPECT_EQ(held(), 1);
}

TEST(MetricsWire, ErrorRepliesAndResetStat) {
  MetricsServer m;
  RawConnection c(m.server.port());
  ASSERT_EQ(c.Command("NOSUCHCMD").substr(0, 4), "-ERR");
  ASSERT_EQ(c.Command("EVAL", "return redis.error_reply('MINE x')", "0"), "-MINE x\r\n");
  std::string r = Get(m.port(), "/metrics");
  EXPECT_EQ(Sample(r, "latch_error_replies_total"), 2) << r;
  EXPECT_NE(r.find("\nlatch_error_replies_by_code_total{code=\"ERR\"} 1\n"), std::string::npos)
      << r;
  EXPECT_NE(r.find("\nlatch_error_replies_by_code_total{code=\"MINE\"} 1\n"), std::string::npos)
      << r;
  ASSERT_EQ(c.Command("CONFIG", "RESETSTAT"), "+OK\r\n");
  r = Get(m.port(), "/metrics");
  EXPECT_EQ(Sample(r, "latch_error_replies_total"), 0) << r;
  EXPECT_EQ(r.find("latch_error_replies_by_code_total{"), std::string::npos) << r;
  EXPECT_EQ(Sample(r, "latch_commands_processed_total"), 1) << "RESETSTAT itself" << r;
  EXPECT_EQ(Sample(r, "latch_connected_clients"), 1) << "a gauge is not reset" << r;
}

TEST(MetricsWire, KeepAliveAndHead) {
  MetricsServer m;
  const std::string r = Http(m.port(),
                             "GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n"
                             "HEAD /metrics HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
  const auto second = r.find("HTTP/1.1 200 OK\r\n", 1);
  ASSERT_NE(second, std::string::npos) << "two responses on one connection: " << r;
  const std::string head = r.substr(second);
  std::smatch len;
  ASSERT_TRUE(std::regex_search(head, len, std::regex("Content-Length: ([0-9]+)\r\n"))) << head;
  EXPECT_GT(std::stoll(len[1]), 100);
  EXPECT_EQ(head.substr(head.find("\r\n\r\n") + 4), "") << "HEAD has no body";
}

TEST(MetricsWire, OtherPathsMethodsAndBadInput) {
  MetricsServer m;
  EXPECT_EQ(Get(m.port(), "/").substr(0, 24), "HTTP/1.1 404 Not Found\r\n");
  const std::string post = Http(
      m.port(), "POST /metrics HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi");
  EXPECT_EQ(post.substr(0, 33), "HTTP/1.1 405 Method Not Allowed\r\n") << post;
  EXPECT_NE(post.find("Allow: GET, HEAD\r\n"), std::string::npos) << post;
  EXPECT_EQ(Http(m.port(), "GARBAGE\r\n\r\n").substr(0, 26), "HTTP/1.1 400 Bad Request\r\n");
  EXPECT_EQ(Http(m.port(), "GET /metrics HTTP/1.1\r\nX: " + std::string(20000, 'a') + "\r\n\r\n")
                .substr(0, 26),
            "HTTP/1.1 400 Bad Request\r\n")
      << "headers past the limit";
  EXPECT_EQ(Http(m.port(), "POST /metrics HTTP/1.1\r\nContent-Length: 100000\r\n\r\n")
                .substr(0, 26),
            "HTTP/1.1 400 Bad Request\r\n")
      << "a body past the limit";
  // Both sides still serve.
  RawConnection c(m.server.port());
  EXPECT_EQ(c.Command("PING"), "+PONG\r\n");
  EXPECT_EQ(Get(m.port(), "/metrics").substr(0, 17), "HTTP/1.1 200 OK\r\n");
}

}  // namespace
}  // namespace latch::test
