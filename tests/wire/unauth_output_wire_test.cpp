// The output cap of a client that has not authenticated (Redis's fix of CVE-2025-21605, in
// redis-server 7.0.15 as Debian ships it): once its pending replies spill past Redis's 16 KiB
// reply buffer it is closed without a byte more, however many requests it pipelined. Checked
// side by side with redis-server: 256 wrong AUTHs (64-byte errors, exactly 16 KiB) are all
// answered, 257 close the connection with nothing written, 20,000 likewise; once
// authenticated, or with no password set, there is no such cap.
#include <gtest/gtest.h>

#include <string>

#include "support/embedded_server.h"
#include "support/raw_connection.h"
#include "support/server_process.h"

namespace latch::test {
namespace {

const std::string kWrongAuth = RawConnection::Encode({"AUTH", "wrong"});
const std::string kWrongPassReply =
    "-WRONGPASS invalid username-password pair or user is disabled.\r\n";

struct Outcome {
  bool closed = false;
  std::string received;  // every byte the server wrote before closing or going quiet
};

// Sends `request` `count` times in one write and reads until the server closes the
// connection or has written `count` replies of `reply` size.
Outcome Flood(int port, const std::string& request, int count, std::size_t reply_size) {
  RawConnection c(port);
  Outcome o;
  std::string all;
  for (int i = 0; i < count; ++i) all += request;
  if (!c.Send(all)) return o;
  const std::size_t want = reply_size * static_cast<std::size_t>(count);
  while (o.received.size() < want) {
    std::optional<std::string> r = c.ReadReply();
    if (!r) {
      o.closed = !c.connected() || c.WaitClosed();
      return o;
    }
    o.received += *r;
  }
  return o;
}

void ExpectUnauthenticatedCap(int port, const std::string& who) {
  const std::size_t n = kWrongPassReply.size();
  ASSERT_EQ(n, 64u);
  Outcome fits = Flood(port, kWrongAuth, 256, n);
  EXPECT_FALSE(fits.closed) << who;
  EXPECT_EQ(fits.received.size(), 256 * n) << who;
  EXPECT_EQ(fits.received.substr(0, n), kWrongPassReply) << who;

  Outcome over = Flood(port, kWrongAuth, 257, n);
  EXPECT_TRUE(over.closed) << who;
  EXPECT_EQ(over.received.size(), 0u)
      << who << ": nothing is written to a client closed for its output";

  Outcome flood = Flood(port, kWrongAuth, 20000, n);
  EXPECT_TRUE(flood.closed) << who;
  EXPECT_LE(flood.received.size(), 16u * 1024) << who;

  // The cap is for clients that have not authenticated: after AUTH, 20,000 replies flow.
  RawConnection authed(port);
  ASSERT_EQ(authed.Command("AUTH", "pw"), "+OK\r\n") << who;
  std::string pings;
  for (int i = 0; i < 20000; ++i) pings += RawConnection::Encode({"PING"});
  ASSERT_TRUE(authed.Send(pings)) << who;
  for (int i = 0; i < 20000; ++i) {
    ASSERT_EQ(authed.ReadReply(), "+PONG\r\n") << who << " reply " << i;
  }
}

TEST(UnauthenticatedOutput, ClosedPast16KiBAsRedis) {
  RedisServerProcess redis({"--requirepass", "pw"});
  ASSERT_TRUE(redis.ok()) << redis.error();
  ExpectUnauthenticatedCap(redis.port(), "redis-server");

  Options o = EmbeddedServer::DefaultOptions();
  o.requirepass = "pw";
  EmbeddedServer latchd(o);
  ExpectUnauthenticatedCap(latchd.port(), "latchd");
  // Both logged it as Redis does; latchd serves on.
  RawConnection admin(latchd.port());
  EXPECT_EQ(admin.Command("AUTH", "pw"), "+OK\r\n");
  EXPECT_EQ(admin.Command("PING"), "+PONG\r\n");
}

// The default user turned off also means "not authenticated" (Redis's authRequired()).
TEST(UnauthenticatedOutput, DefaultUserOffCountsAsUnauthenticated) {
  EmbeddedServer latchd;
  RawConnection admin(latchd.port());
  ASSERT_EQ(admin.Command("ACL", "SETUSER", "admin", "on", ">pw", "+@all", "~*"), "+OK\r\n");
  ASSERT_EQ(admin.Command("ACL", "SETUSER", "default", "off"), "+OK\r\n");
  const std::string noauth = "-NOAUTH Authentication required.\r\n";
  Outcome over = Flood(latchd.port(), RawConnection::Encode({"PING"}), 20000, noauth.size());
  EXPECT_TRUE(over.closed);
  EXPECT_LE(over.received.size(), 16u * 1024);
  EXPECT_EQ(admin.Command("PING"), "+PONG\r\n") << "the earlier connection stays authenticated";
}

// No password: nobody is unauthenticated, and 20,000 error replies are all written.
TEST(UnauthenticatedOutput, NoCapWithoutPassword) {
  EmbeddedServer latchd;
  const std::string reply =
      "-ERR AUTH <password> called without any password configured for the default user. "
      "Are you sure your configuration is correct?\r\n";
  Outcome all = Flood(latchd.port(), kWrongAuth, 20000, reply.size());
  EXPECT_FALSE(all.closed);
  EXPECT_EQ(all.received.size(), 20000 * reply.size());
}

}  // namespace
}  // namespace latch::test
