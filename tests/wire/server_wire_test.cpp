// The embedded server over real sockets: pipelining, inline requests, RESP3, protocol
// limits, clients that vanish mid-request, maxclients, requirepass, idle timeout, expiry on
// the manual clock, transactions and shutdown.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "support/embedded_server.h"
#include "support/raw_connection.h"
#include "support/tick_probe.h"
#include "support/wire_expect.h"

namespace latch::test {
namespace {

using namespace std::chrono_literals;

TEST(ServerWire, PipelineOfAThousandRepliesInOrder) {
  EmbeddedServer server;
  RawConnection c(server.port());
  std::string batch;
  for (int i = 0; i < 1000; ++i) {
    batch += RawConnection::Encode({"SET", "k" + std::to_string(i), std::to_string(i)});
    batch += RawConnection::Encode({"GET", "k" + std::to_string(i)});
  }
  ASSERT_TRUE(c.Send(batch));
  for (int i = 0; i < 1000; ++i) {
    ASSERT_EQ(c.ReadReply(), "+OK\r\n") << i;
    ASSERT_EQ(c.ReadReply(), Bulk(std::to_string(i))) << i;
  }
  EXPECT_EQ(c.Command("DBSIZE"), ":1000\r\n");
}

TEST(ServerWire, PipelineSplitAtEveryByte) {
  EmbeddedServer server;
  RawConnection c(server.port());
  const std::string req = RawConnection::Encode({"SET", "key", "a\r\nb"}) + "GET key\r\n" +
                          RawConnection::Encode({"GET", "key"});
  for (std::size_t cut = 1; cut < req.size(); ++cut) {
    ASSERT_TRUE(c.Send(req.substr(0, cut)));
    std::this_thread::sleep_for(1ms);  // let the first piece arrive on its own
    ASSERT_TRUE(c.Send(req.substr(cut)));
    ASSERT_EQ(c.ReadReply(), "+OK\r\n") << "cut " << cut;
    ASSERT_EQ(c.ReadReply(), Bulk("a\r\nb")) << "cut " << cut;
    ASSERT_EQ(c.ReadReply(), Bulk("a\r\nb")) << "cut " << cut;
  }
}

TEST(ServerWire, InlineCommandsWithQuotesAndBareLf) {
  EmbeddedServer server;
  RawConnection c(server.port());
  ASSERT_TRUE(c.Send("SET \"a key\" 'it''s'\r\n"));
  EXPECT_EQ(c.ReadReply(), "-ERR Protocol error: unbalanced quotes in request\r\n");
  EXPECT_TRUE(c.WaitClosed());

  RawConnection d(server.port());
  ASSERT_TRUE(d.Send("SET \"a key\" \"x\\ty\"\nGET \"a key\"\r\n\r\nPING\n"));
  EXPECT_EQ(d.ReadReply(), "+OK\r\n");
  EXPECT_EQ(d.ReadReply(), Bulk("x\ty"));
  EXPECT_EQ(d.ReadReply(), "+PONG\r\n");
}

TEST(ServerWire, Resp3AfterHello) {
  EmbeddedServer server;
  RawConnection c(server.port());
  EXPECT_EQ(c.Command("GET", "missing"), "$-1\r\n");
  std::string hello = c.Command("HELLO", "3");
  ASSERT_TRUE(hello.starts_with("%7\r\n$6\r\nserver\r\n")) << hello;
  EXPECT_NE(hello.find("$5\r\nproto\r\n:3\r\n"), std::string::npos) << hello;
  EXPECT_EQ(c.Command("GET", "missing"), "_\r\n");
  EXPECT_EQ(c.Command("CONFIG", "GET", "maxclients"), "%1\r\n$10\r\nmaxclients\r\n$5\r\n10000\r\n");
  EXPECT_EQ(c.Command("HELLO", "4"), "-NOPROTO unsupported protocol version\r\n");
  EXPECT_EQ(c.Command("HELLO", "x"),
            "-ERR Protocol version is not an integer or out of range\r\n");
  std::string back = c.Command("HELLO", "2");
  EXPECT_TRUE(back.starts_with("*14\r\n")) << back;
  EXPECT_EQ(c.Command("GET", "missing"), "$-1\r\n");
}

struct ProtocolErrorCase {
  std::string input;
  std::string reply;
};

TEST(ServerWire, ProtocolErrorsReplyThenCloseOnlyThatClient) {
  EmbeddedServer server;
  RawConnection bystander(server.port());
  ASSERT_EQ(bystander.Command("SET", "x", "1"), "+OK\r\n");
  const std::vector<ProtocolErrorCase> cases = {
      {"*abc\r\n", "-ERR Protocol error: invalid multibulk length\r\n"},
      {"*1\r\n$-5\r\n", "-ERR Protocol error: invalid bulk length\r\n"},
      {"*1\r\n:12\r\n", "-ERR Protocol error: expected '$', got ':'\r\n"},
      {"*1\r\n$999999999999\r\n", "-ERR Protocol error: invalid bulk length\r\n"},
      {"*" + std::string(70000, '1'), "-ERR Protocol error: too big mbulk count string\r\n"},
      {"GET " + std::string(70000, 'a'), "-ERR Protocol error: too big inline request\r\n"},
      {"*1\r\n$" + std::string(70000, '1'), "-ERR Protocol error: too big bulk count string\r\n"},
      {"SET 'a", "-ERR Protocol error: unbalanced quotes in request\r\n"},
  };
  for (const auto& tc : cases) {
    RawConnection c(server.port());
    std::string in = tc.input;
    if (in.ends_with("'a")) in += "\r\n";
    ASSERT_TRUE(c.Send(in));
    EXPECT_EQ(c.ReadReply(), tc.reply) << tc.input.substr(0, 40);
    EXPECT_TRUE(c.WaitClosed()) << tc.input.substr(0, 40);
  }
  EXPECT_EQ(bystander.Command("GET", "x"), Bulk("1"));
}

TEST(ServerWire, ClientDroppingMidCommandLeavesOthersUnaffected) {
  EmbeddedServer server;
  RawConnection other(server.port());
  for (int i = 0; i < 20; ++i) {
    RawConnection c(server.port());
    // A request cut inside a bulk argument, and one that announced a large bulk.
    ASSERT_TRUE(c.Send(i % 2 ? "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$10\r\nabc"
                             : "*2\r\n$3\r\nGET\r\n$100000\r\nxyz"));
    c.Close();
    ASSERT_EQ(other.Command("INCR", "n"), ":" + std::to_string(i + 1) + "\r\n");
  }
  EXPECT_EQ(other.Command("EXISTS", "k"), ":0\r\n");
}

TEST(ServerWire, MaxClientsRefusesTheExtraClient) {
  Options o = EmbeddedServer::DefaultOptions();
  o.maxclients = 2;
  EmbeddedServer server(o);
  RawConnection a(server.port()), b(server.port());
  ASSERT_EQ(a.Command("PING"), "+PONG\r\n");
  ASSERT_EQ(b.Command("PING"), "+PONG\r\n");
  RawConnection c(server.port());
  EXPECT_EQ(c.ReadReply(), "-ERR max number of clients reached\r\n");
  EXPECT_TRUE(c.WaitClosed());
  a.Close();
  // The slot is free again once the server has seen the close.
  EXPECT_TRUE(Eventually([&] {
    RawConnection d(server.port());
    return d.Command("PING") == "+PONG\r\n";
  }));
}

TEST(ServerWire, RequirePassGatesCommandsAndLimitsUnauthenticatedRequests) {
  Options o = EmbeddedServer::DefaultOptions();
  o.requirepass = "s3cret";
  EmbeddedServer server(o);
  RawConnection c(server.port());
  EXPECT_EQ(c.Command("GET", "a"), "-NOAUTH Authentication required.\r\n");
  EXPECT_EQ(c.Command("NOPE"), "-ERR unknown command 'NOPE', with args beginning with: \r\n");
  EXPECT_EQ(c.Command("AUTH", "wrong"),
            "-WRONGPASS invalid username-password pair or user is disabled.\r\n");
  EXPECT_EQ(c.Command("AUTH", "bob", "s3cret"),
            "-WRONGPASS invalid username-password pair or user is disabled.\r\n");
  EXPECT_TRUE(c.Command("HELLO", "3").starts_with("-NOAUTH HELLO must be called"));
  EXPECT_EQ(c.Command("AUTH", "s3cret"), "+OK\r\n");
  EXPECT_EQ(c.Command("GET", "a"), "$-1\r\n");

  RawConnection h(server.port());
  EXPECT_TRUE(h.Command("HELLO", "3", "AUTH", "default", "s3cret").starts_with("%7\r\n"));
  EXPECT_EQ(h.Command("GET", "a"), "_\r\n");

  // Before AUTH: at most 10 arguments and 16 KiB per argument (Redis 7.0.15 texts).
  RawConnection big(server.port());
  ASSERT_TRUE(big.Send("*11\r\n"));
  EXPECT_EQ(big.ReadReply(), "-ERR Protocol error: unauthenticated multibulk length\r\n");
  EXPECT_TRUE(big.WaitClosed());
  RawConnection bulk(server.port());
  ASSERT_TRUE(bulk.Send("*2\r\n$4\r\nAUTH\r\n$16385\r\n"));
  EXPECT_EQ(bulk.ReadReply(), "-ERR Protocol error: unauthenticated bulk length\r\n");
  // After AUTH the normal limits apply.
  std::vector<std::string> many(12, "k");
  many[0] = "EXISTS";
  EXPECT_EQ(c.CommandArgs(many), ":0\r\n");
}

TEST(ServerWire, AuthWithoutPasswordConfigured) {
  EmbeddedServer server;
  RawConnection c(server.port());
  EXPECT_EQ(c.Command("AUTH", "x"),
            "-ERR AUTH <password> called without any password configured for the default user. "
            "Are you sure your configuration is correct?\r\n");
  EXPECT_EQ(c.Command("AUTH", "default", "anything"), "+OK\r\n");
}

TEST(ServerWire, KeysExpireExactlyOnTheManualClock) {
  EmbeddedServer server;
  RawConnection c(server.port());
  ASSERT_EQ(c.Command("SET", "lock", "owner", "NX", "PX", "100"), "+OK\r\n");
  EXPECT_EQ(c.Command("PTTL", "lock"), ":100\r\n");
  server.clock().advance(99);
  EXPECT_EQ(c.Command("PTTL", "lock"), ":1\r\n");
  EXPECT_EQ(c.Command("SET", "lock", "other", "NX", "PX", "100"), "$-1\r\n");
  server.clock().advance(1);
  EXPECT_EQ(c.Command("GET", "lock"), "$-1\r\n");
  EXPECT_EQ(c.Command("SET", "lock", "other", "NX", "PX", "100"), "+OK\r\n");
}

// LASTSAVE is the start (latchd writes no RDB) and stays there as time passes; ROLE says
// master with no replicas.
TEST(ServerWire, LastSaveIsTheStartAndRoleIsMaster) {
  EmbeddedServer server;  // its manual clock starts at 1,700,000,000,000 ms
  RawConnection c(server.port());
  EXPECT_EQ(c.Command("LASTSAVE"), ":1700000000\r\n");
  server.clock().advance(5000);
  EXPECT_EQ(c.Command("LASTSAVE"), ":1700000000\r\n");
  EXPECT_EQ(c.Command("ROLE"), "*3\r\n$6\r\nmaster\r\n:0\r\n*0\r\n");
}

TEST(ServerWire, ActiveExpiryReclaimsKeysNobodyReads) {
  EmbeddedServer server;
  RawConnection c(server.port());
  std::string batch;
  for (int i = 0; i < 5000; ++i) {
    batch += RawConnection::Encode({"SET", "t" + std::to_string(i), "v", "PX", "1000"});
  }
  ASSERT_TRUE(c.Send(batch));
  for (int i = 0; i < 5000; ++i) ASSERT_EQ(c.ReadReply(), "+OK\r\n");
  ASSERT_EQ(c.Command("SET", "keep", "v"), "+OK\r\n");
  EXPECT_EQ(c.Command("DBSIZE"), ":5001\r\n");
  server.clock().advance(1000);
  // DBSIZE counts keys not yet reclaimed (as in Redis); the worker tick reclaims them.
  EXPECT_TRUE(Eventually([&] { return c.Command("DBSIZE") == ":1\r\n"; }));
  EXPECT_EQ(c.Command("GET", "keep"), Bulk("v"));
}

TEST(ServerWire, WallClockStepDoesNotMoveRelativeTtl) {
  EmbeddedServer server;
  RawConnection c(server.port());
  ASSERT_EQ(c.Command("SET", "lock", "me", "PX", "5000"), "+OK\r\n");
  server.clock().step_wall(3'600'000);
  EXPECT_EQ(c.Command("PTTL", "lock"), ":5000\r\n");
  server.clock().step_wall(-7'200'000);
  EXPECT_EQ(c.Command("PTTL", "lock"), ":5000\r\n");
  server.clock().advance(5000);
  EXPECT_EQ(c.Command("GET", "lock"), "$-1\r\n");
}

TEST(ServerWire, IdleClientsAreClosedAfterTimeout) {
  Options o = EmbeddedServer::DefaultOptions();
  o.timeout = 2;
  o.io_threads = 1;  // the tick the probe sees has also checked `idle` (tick_probe.h)
  EmbeddedServer server(o);
  TickProbe tick(server.port());
  ASSERT_TRUE(tick.ok());
  RawConnection idle(server.port(), 4000ms);
  ASSERT_EQ(idle.Command("PING"), "+PONG\r\n");
  server.clock().advance(1000);
  ASSERT_TRUE(tick.SawSecondsPass(1)) << tick.last_reply();  // checked at 1 s: still open
  ASSERT_EQ(idle.Command("PING"), "+PONG\r\n");
  server.clock().advance(2001);
  EXPECT_TRUE(idle.WaitClosed());
}

TEST(ServerWire, QueryBufferLimitClosesTheClient) {
  Options o = EmbeddedServer::DefaultOptions();
  o.client_query_buffer_limit = 64 * 1024;
  EmbeddedServer server(o);
  RawConnection c(server.port());
  std::string req = "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$200000\r\n" + std::string(100000, 'x');
  ASSERT_TRUE(c.Send(req));
  EXPECT_TRUE(c.WaitClosed());
  RawConnection d(server.port());
  EXPECT_EQ(d.Command("PING"), "+PONG\r\n");
}

TEST(ServerWire, ConcurrentIncrementsFromManyClients) {
  EmbeddedServer server;
  constexpr int kThreads = 8, kEach = 300;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      RawConnection c(server.port());
      for (int i = 0; i < kEach; ++i) {
        if (!c.Command("INCR", "counter").starts_with(":")) ++failures;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  RawConnection c(server.port());
  EXPECT_EQ(c.Command("GET", "counter"), Bulk(std::to_string(kThreads * kEach)));
}

TEST(ServerWire, WatchedKeyChangedByAnotherClientAbortsExec) {
  EmbeddedServer server;
  RawConnection a(server.port()), b(server.port());
  ASSERT_EQ(a.Command("SET", "lock", "me"), "+OK\r\n");
  ASSERT_EQ(a.Command("WATCH", "lock"), "+OK\r\n");
  ASSERT_EQ(a.Command("MULTI"), "+OK\r\n");
  ASSERT_EQ(a.Command("DEL", "lock"), "+QUEUED\r\n");
  // A failed SET NX changes nothing: it must not abort the transaction.
  ASSERT_EQ(b.Command("SET", "lock", "them", "NX"), "$-1\r\n");
  EXPECT_EQ(a.Command("EXEC"), "*1\r\n:1\r\n");

  ASSERT_EQ(a.Command("SET", "lock", "me"), "+OK\r\n");
  ASSERT_EQ(a.Command("WATCH", "lock"), "+OK\r\n");
  ASSERT_EQ(b.Command("SET", "lock", "them"), "+OK\r\n");
  ASSERT_EQ(a.Command("MULTI"), "+OK\r\n");
  ASSERT_EQ(a.Command("DEL", "lock"), "+QUEUED\r\n");
  EXPECT_EQ(a.Command("EXEC"), "*-1\r\n");
  EXPECT_EQ(a.Command("GET", "lock"), Bulk("them"));
}

TEST(ServerWire, WatchedKeyThatExpiresAbortsExec) {
  EmbeddedServer server;
  RawConnection a(server.port());
  ASSERT_EQ(a.Command("SET", "lock", "me", "PX", "50"), "+OK\r\n");
  ASSERT_EQ(a.Command("WATCH", "lock"), "+OK\r\n");
  server.clock().advance(50);
  ASSERT_EQ(a.Command("MULTI"), "+OK\r\n");
  ASSERT_EQ(a.Command("SET", "lock", "again"), "+QUEUED\r\n");
  EXPECT_EQ(a.Command("EXEC"), "*-1\r\n");
}

TEST(ServerWire, StopClosesConnectedClients) {
  auto server = std::make_unique<EmbeddedServer>();
  RawConnection c(server->port());
  ASSERT_EQ(c.Command("PING"), "+PONG\r\n");
  server->server().stop();
  EXPECT_TRUE(c.WaitClosed());
  RawConnection d;
  EXPECT_FALSE(d.Connect(server->port()));
}

TEST(ServerWire, StartsAgainAfterStopAndAfterShutdown) {
  EmbeddedServer server;
  {
    RawConnection c(server.port());
    ASSERT_EQ(c.Command("SET", "k", "v"), "+OK\r\n");
  }
  server.server().stop();
  const int second = server.server().start();
  {
    RawConnection c(second);
    EXPECT_EQ(c.Command("GET", "k"), "$1\r\nv\r\n") << "the keyspace outlives stop()";
    ASSERT_TRUE(c.Send(RawConnection::Encode({"SHUTDOWN", "NOSAVE"})));
    EXPECT_TRUE(c.WaitClosed());
  }
  server.server().wait();
  server.server().stop();
  const int third = server.server().start();
  RawConnection c(third);
  EXPECT_EQ(c.Command("GET", "k"), "$1\r\nv\r\n");
  RawConnection d(third);
  EXPECT_EQ(d.Command("PING"), "+PONG\r\n") << "a third start accepts more than one client";
}

// redis.conf's form "bind 127.0.0.1 -::1": several addresses on one port, '-' marking one
// that may be missing. 192.0.2.1 (TEST-NET-1, never assigned to a host) stands for a
// missing address; nothing binds anywhere but 127.0.0.1.
TEST(ServerWire, BindsEveryAddressAndSkipsOnlyMissingOptionalOnes) {
  Options o;
  o.port = 0;
  o.io_threads = 1;
  o.bind = "127.0.0.1 -192.0.2.1";
  {
    Server server(o);
    const int port = server.start();
    RawConnection c(port);
    EXPECT_EQ(c.Command("PING"), "+PONG\r\n");
    EXPECT_EQ(c.Command("CONFIG", "GET", "bind"), "*2\r\n$4\r\nbind\r\n$20\r\n127.0.0.1 -192.0.2.1\r\n");
  }
  // Why start() refused, or "" when it started.
  auto start_error = [&o](const char* bind) -> std::string {
    o.bind = bind;
    Server server(o);
    try {
      server.start();
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "";
  };
  const std::string missing = start_error("127.0.0.1 192.0.2.1");
  EXPECT_NE(missing.find("192.0.2.1"), std::string::npos)
      << "a required address that is missing must stop the start: " << missing;
  const std::string none = start_error("-192.0.2.1");
  EXPECT_NE(none.find("none of the bind addresses"), std::string::npos)
      << "no address at all must stop the start: " << none;
}

TEST(ServerWire, ClientNameIdAndList) {
  EmbeddedServer server;
  RawConnection c(server.port());
  EXPECT_EQ(c.Command("CLIENT", "GETNAME"), "$-1\r\n");
  EXPECT_EQ(c.Command("CLIENT", "SETNAME", "worker-1"), "+OK\r\n");
  EXPECT_EQ(c.Command("CLIENT", "GETNAME"), Bulk("worker-1"));
  EXPECT_EQ(c.Command("CLIENT", "SETNAME", "a b"),
            "-ERR Client names cannot contain spaces, newlines or special characters.\r\n");
  std::string id = c.Command("CLIENT", "ID");
  ASSERT_TRUE(id.starts_with(":"));
  std::string list = c.Command("CLIENT", "LIST");
  EXPECT_NE(list.find("id=" + id.substr(1, id.size() - 3) + " "), std::string::npos) << list;
  EXPECT_NE(list.find(" name=worker-1 "), std::string::npos) << list;
  EXPECT_NE(list.find(" cmd=client|list "), std::string::npos) << list;
  EXPECT_EQ(c.Command("CLIENT", "NOPE"), "-ERR unknown subcommand 'NOPE'. Try CLIENT HELP.\r\n");
  EXPECT_EQ(c.Command("CLIENT", "SETNAME"),
            "-ERR wrong number of arguments for 'client|setname' command\r\n");
}

}  // namespace
}  // namespace latch::test
