// Databases over real sockets (issue 17): LOCK.* and their waiters, fencing tokens, WATCH,
// native lock scripts, SWAPDB and MOVE with a held lock, CLIENT LIST's db=, INFO keyspace
// per database. (Byte-for-byte replies of SELECT/SWAPDB/MOVE/... against Redis:
// corpus/databases.txt.)
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "support/embedded_server.h"
#include "support/free_port.h"
#include "support/raw_connection.h"
#include "support/wire_expect.h"

namespace latch::test {
namespace {

std::uint64_t TokenOf(const std::optional<std::string>& reply) {
  if (!reply || reply->size() < 4 || (*reply)[0] != ':') return 0;
  return std::stoull(reply->substr(1));
}

int DbWaitersOf(RawConnection& c, const std::string& key) {
  std::string r = c.Command("LOCK.INFO", key);
  auto pos = r.rfind("waiters\r\n:");
  return pos == std::string::npos ? -1 : std::stoi(r.substr(pos + 10));
}

TEST(DatabaseWire, LocksOfTheSameNameInTwoDatabasesAreIndependent) {
  EmbeddedServer server;
  RawConnection a(server.port()), b(server.port());
  ASSERT_EQ(b.Command("SELECT", "3"), "+OK\r\n");
  const std::uint64_t t0 = TokenOf(a.Command("LOCK.ACQUIRE", "orders", "alice", "10000"));
  const std::uint64_t t3 = TokenOf(b.Command("LOCK.ACQUIRE", "orders", "bob", "10000"));
  ASSERT_NE(t0, 0u);
  ASSERT_NE(t3, 0u);
  EXPECT_GT(t3, t0) << "one fencing counter for every database";
  EXPECT_EQ(a.Command("GET", "orders"), Bulk("alice"));
  EXPECT_EQ(b.Command("GET", "orders"), Bulk("bob"));
  EXPECT_EQ(a.Command("LOCK.RELEASE", "orders", "bob"), ":0\r\n");
  EXPECT_EQ(b.Command("LOCK.RELEASE", "orders", "bob"), ":1\r\n");
  EXPECT_EQ(a.Command("GET", "orders"), Bulk("alice"));
  EXPECT_EQ(a.Command("DBSIZE"), ":1\r\n");
  EXPECT_EQ(b.Command("DBSIZE"), ":0\r\n");
}

TEST(DatabaseWire, AWaiterIsHandedTheLockOfItsOwnDatabaseOnly) {
  EmbeddedServer server;
  RawConnection holder(server.port()), waiter(server.port()), other(server.port());
  for (RawConnection* c : {&holder, &waiter}) ASSERT_EQ(c->Command("SELECT", "2"), "+OK\r\n");
  ASSERT_NE(TokenOf(holder.Command("LOCK.ACQUIRE", "job", "h", "60000")), 0u);
  ASSERT_NE(TokenOf(other.Command("LOCK.ACQUIRE", "job", "x", "60000")), 0u);  // db 0
  ASSERT_TRUE(waiter.Send(RawConnection::Encode({"LOCK.ACQUIRE", "job", "w", "5000", "WAIT",
                                                 "0"})));
  ASSERT_TRUE(Eventually([&] { return DbWaitersOf(holder, "job") == 1; }));
  EXPECT_EQ(DbWaitersOf(other, "job"), 0);
  // Releasing db 0's lock of the same name wakes nobody.
  EXPECT_EQ(other.Command("LOCK.RELEASE", "job", "x"), ":1\r\n");
  EXPECT_EQ(DbWaitersOf(holder, "job"), 1);
  EXPECT_EQ(holder.Command("LOCK.RELEASE", "job", "h"), ":1\r\n");
  EXPECT_NE(TokenOf(waiter.ReadReply()), 0u);
  EXPECT_EQ(holder.Command("GET", "job"), Bulk("w"));
  EXPECT_EQ(other.Command("EXISTS", "job"), ":0\r\n");
}

TEST(DatabaseWire, WatchSeesWritesToItsDatabaseOnly) {
  EmbeddedServer server;
  RawConnection c(server.port()), writer(server.port());
  ASSERT_EQ(c.Command("SELECT", "1"), "+OK\r\n");
  ASSERT_EQ(c.Command("WATCH", "lock"), "+OK\r\n");
  ASSERT_NE(TokenOf(writer.Command("LOCK.ACQUIRE", "lock", "db0", "1000")), 0u);  // db 0
  ASSERT_EQ(c.Command("MULTI"), "+OK\r\n");
  ASSERT_EQ(c.Command("SET", "lock", "mine"), "+QUEUED\r\n");
  EXPECT_EQ(c.Command("EXEC"), "*1\r\n+OK\r\n");

  ASSERT_EQ(c.Command("WATCH", "lock"), "+OK\r\n");
  ASSERT_EQ(writer.Command("SELECT", "1"), "+OK\r\n");
  ASSERT_EQ(writer.Command("DEL", "lock"), ":1\r\n");
  ASSERT_EQ(c.Command("MULTI"), "+OK\r\n");
  ASSERT_EQ(c.Command("SET", "lock", "again"), "+QUEUED\r\n");
  EXPECT_EQ(c.Command("EXEC"), "*-1\r\n");

  // SWAPDB dirties a watched key that exists in either database, as Redis.
  ASSERT_EQ(c.Command("SET", "w", "1"), "+OK\r\n");
  ASSERT_EQ(c.Command("WATCH", "w"), "+OK\r\n");
  ASSERT_EQ(writer.Command("SWAPDB", "1", "9"), "+OK\r\n");
  ASSERT_EQ(c.Command("MULTI"), "+OK\r\n");
  ASSERT_EQ(c.Command("GET", "w"), "+QUEUED\r\n");
  EXPECT_EQ(c.Command("EXEC"), "*-1\r\n");
  EXPECT_EQ(c.Command("GET", "w"), "$-1\r\n");
  ASSERT_EQ(c.Command("SELECT", "9"), "+OK\r\n");
  EXPECT_EQ(c.Command("GET", "w"), Bulk("1"));
}

TEST(DatabaseWire, MoveAndSwapDbCarryALockWithItsTokenAndWaiters) {
  EmbeddedServer server;
  RawConnection c(server.port()), waiter(server.port());
  const std::uint64_t t = TokenOf(c.Command("LOCK.ACQUIRE", "l", "o", "60000"));
  ASSERT_NE(t, 0u);
  EXPECT_EQ(c.Command("MOVE", "l", "4"), ":1\r\n");
  ASSERT_EQ(c.Command("SELECT", "4"), "+OK\r\n");
  const std::string info = c.Command("LOCK.INFO", "l");
  EXPECT_NE(info.find(":" + std::to_string(t) + "\r\n"), std::string::npos) << info;
  // A waiter in db 4; the database moves to number 5 with its queue.
  ASSERT_EQ(waiter.Command("SELECT", "4"), "+OK\r\n");
  ASSERT_TRUE(waiter.Send(RawConnection::Encode({"LOCK.ACQUIRE", "l", "w", "5000", "WAIT",
                                                 "0"})));
  ASSERT_TRUE(Eventually([&] { return DbWaitersOf(c, "l") == 1; }));
  EXPECT_EQ(c.Command("SWAPDB", "4", "5"), "+OK\r\n");
  EXPECT_EQ(c.Command("EXISTS", "l"), ":0\r\n");
  ASSERT_EQ(c.Command("SELECT", "5"), "+OK\r\n");
  EXPECT_EQ(c.Command("LOCK.RELEASE", "l", "o"), ":1\r\n");
  EXPECT_GT(TokenOf(waiter.ReadReply()), t);
  EXPECT_EQ(c.Command("GET", "l"), Bulk("w"));
}

TEST(DatabaseWire, NativeScriptsRunInTheCallersDatabase) {
  EmbeddedServer server;
  RawConnection c(server.port());
  ASSERT_EQ(c.Command("SELECT", "6"), "+OK\r\n");
  // The release script every Redis lock library sends (redlock, redis-py's Lock).
  const std::string release =
      "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) "
      "else return 0 end";
  ASSERT_EQ(c.Command("SET", "r", "me", "NX", "PX", "10000"), "+OK\r\n");
  EXPECT_EQ(c.Command("EVAL", release, "1", "r", "me"), ":1\r\n");
  ASSERT_EQ(c.Command("SET", "r", "me", "NX", "PX", "10000"), "+OK\r\n");
  ASSERT_EQ(c.Command("SELECT", "0"), "+OK\r\n");
  EXPECT_EQ(c.Command("EVAL", release, "1", "r", "me"), ":0\r\n");
  EXPECT_EQ(c.Command("EVAL", "redis.call('SELECT', 6) return redis.call('GET', KEYS[1])", "1",
                      "r"),
            Bulk("me"));
  EXPECT_EQ(c.Command("GET", "r"), "$-1\r\n") << "the script's SELECT is its own";
}

TEST(DatabaseWire, ClientListAndInfoShowDatabases) {
  EmbeddedServer server;
  RawConnection c(server.port());
  ASSERT_EQ(c.Command("SELECT", "7"), "+OK\r\n");
  ASSERT_EQ(c.Command("SET", "k", "v"), "+OK\r\n");
  EXPECT_NE(c.Command("CLIENT", "LIST").find(" db=7 "), std::string::npos);
  const std::string info = c.Command("INFO", "keyspace");
  EXPECT_NE(info.find("db7:keys=1,expires=0,avg_ttl=0\r\n"), std::string::npos) << info;
  EXPECT_EQ(info.find("db0:"), std::string::npos) << info;
  EXPECT_EQ(c.Command("RESET"), "+RESET\r\n");
  EXPECT_NE(c.Command("CLIENT", "LIST").find(" db=0 "), std::string::npos);
  EXPECT_EQ(c.Command("GET", "k"), "$-1\r\n");
  EXPECT_EQ(c.Command("HELLO", "2").substr(0, 1), "*");
  EXPECT_EQ(c.Command("SELECT", "7"), "+OK\r\n");
  EXPECT_EQ(c.Command("FLUSHALL"), "+OK\r\n");
  EXPECT_EQ(c.Command("DBSIZE"), ":0\r\n");
}

// GET /metrics: redis_db_keys{db="dbN"} for DB 0 and every database with keys, as the Redis
// exporter shows them.
TEST(DatabaseWire, MetricsCountKeysPerDatabase) {
  Options o = EmbeddedServer::DefaultOptions();
  o.metrics_port = FreePort();
  EmbeddedServer server(o);
  RawConnection c(server.port());
  ASSERT_EQ(c.Command("SELECT", "3"), "+OK\r\n");
  ASSERT_EQ(c.Command("SET", "a", "1"), "+OK\r\n");
  ASSERT_EQ(c.Command("SET", "b", "2", "PX", "100000"), "+OK\r\n");
  ASSERT_EQ(c.Command("SELECT", "4"), "+OK\r\n");  // created, empty: not listed
  RawConnection http(server.server().metrics_port());
  ASSERT_TRUE(http.Send("GET /metrics HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"));
  std::string r;
  ASSERT_TRUE(http.WaitClosed(&r));
  EXPECT_NE(r.find("\nredis_db_keys{db=\"db0\"} 0\n"), std::string::npos) << r;
  EXPECT_NE(r.find("\nredis_db_keys{db=\"db3\"} 2\n"), std::string::npos) << r;
  EXPECT_NE(r.find("\nredis_db_keys_expiring{db=\"db3\"} 1\n"), std::string::npos) << r;
  EXPECT_EQ(r.find("db=\"db4\""), std::string::npos) << r;
  EXPECT_NE(r.find("\nlatch_keys 2\n"), std::string::npos) << r;
}

}  // namespace
}  // namespace latch::test
