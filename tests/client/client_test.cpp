// latch::Client against real servers: commands and reply types, pipelining, the pool, the
// handshake (RESP3/RESP2, AUTH, SELECT, SETNAME), timeouts, broken connections, reconnects.
#include "latch/client.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include "backends.h"
#include "child_server.h"
#include "support/eventually.h"

namespace latch::test {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

class ClientTest : public ::testing::TestWithParam<BackendKind> {
 protected:
  void SetUp() override {
    backend_ = Backend::Start(GetParam());
    ASSERT_TRUE(backend_ && backend_->ok()) << (backend_ ? backend_->error() : "no backend");
    client_ = std::make_unique<Client>(backend_->Options());
    std::string missing = Missing(*client_, Need::kStrings);
    if (!missing.empty()) GTEST_SKIP() << BackendName(GetParam()) << " lacks: " << missing;
  }

  std::unique_ptr<Backend> backend_;
  std::unique_ptr<Client> client_;
};

TEST_P(ClientTest, CommandsReturnTypedReplies) {
  auto set = client_->command_sync("SET", "k", "v");
  ASSERT_TRUE(set.ok()) << set.error().ToString();
  EXPECT_EQ(set->type, ReplyType::kSimpleString);
  EXPECT_EQ(set->str, "OK");
  auto get = client_->command_sync("GET", "k");
  ASSERT_TRUE(get.ok());
  EXPECT_EQ(*get, Reply::Bulk("v"));
  EXPECT_TRUE(client_->command_sync("GET", "missing")->is_null());
  auto del = client_->command_sync("DEL", "k", "missing");
  EXPECT_EQ(*del, Reply::Integer(1));
  // A server error is a reply, not a transport error.
  auto bad = client_->command_sync("SET", "k");
  ASSERT_TRUE(bad.ok());
  EXPECT_EQ(*bad, Reply::Error("ERR wrong number of arguments for 'set' command"));
  // Binary-safe arguments, integers and durations.
  std::string binary("a\0b\r\n", 5);
  EXPECT_EQ(client_->command_sync("SET", "bin", binary, "PX", 10s)->str, "OK");
  EXPECT_EQ(client_->command_sync("GET", "bin")->str, binary);
  auto pttl = client_->command_sync("PTTL", "bin");
  EXPECT_GT(pttl->integer, 9000);
}

TEST_P(ClientTest, PipelineKeepsOrder) {
  std::vector<Command> cmds;
  for (int i = 0; i < 200; ++i) cmds.emplace_back("SET", "p" + std::to_string(i), i);
  for (int i = 0; i < 200; ++i) cmds.emplace_back("GET", "p" + std::to_string(i));
  auto r = client_->pipeline_sync(std::move(cmds));
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  ASSERT_EQ(r->size(), 400u);
  for (int i = 0; i < 200; ++i) EXPECT_EQ((*r)[200 + i].str, std::to_string(i));
}

TEST_P(ClientTest, ManyCallsInFlightEachGetTheirOwnReply) {
  auto options = backend_->Options();
  options.pool_size = 3;
  Client client(options);
  constexpr int kCalls = 2000;
  std::vector<Command> sets;
  for (int i = 0; i < kCalls; ++i)
    sets.emplace_back("SET", "m" + std::to_string(i), "v" + std::to_string(i));
  ASSERT_TRUE(client.pipeline_sync(std::move(sets)).ok());
  std::atomic<int> done{0}, wrong{0};
  std::promise<void> all;
  for (int i = 0; i < kCalls; ++i) {
    client.async_execute(Command("GET", "m" + std::to_string(i)), {}, [&, i](Result<Reply> r) {
      if (!r.ok() || r->str != "v" + std::to_string(i)) ++wrong;
      if (++done == kCalls) all.set_value();
    });
  }
  ASSERT_EQ(all.get_future().wait_for(20s), std::future_status::ready);
  EXPECT_EQ(wrong.load(), 0);
}

TEST_P(ClientTest, ServerDownIsAnErrorAndTheClientReconnects) {
  backend_->Kill();
  auto start = Clock::now();
  auto r = client_->command_sync("PING");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.error().is(Errc::kConnectionLost) || r.error().is(Errc::kConnectFailed))
      << r.error().ToString();
  auto again = client_->command_sync("PING");
  ASSERT_FALSE(again.ok());
  EXPECT_TRUE(again.error().is(Errc::kConnectFailed)) << again.error().ToString();
  EXPECT_LT(Clock::now() - start, 1500ms);  // refused at once: no waiting for the timeout
  ASSERT_TRUE(backend_->Restart());
  // The next attempt comes after a jittered backoff of at most backoff_max.
  Result<Reply> ok = Errc::kTimeout;
  for (int i = 0; i < 50 && !ok.ok(); ++i) {
    ok = client_->command_sync("PING");
    if (!ok.ok()) std::this_thread::sleep_for(50ms);
  }
  ASSERT_TRUE(ok.ok()) << ok.error().ToString();
  EXPECT_EQ(ok->str, "PONG");
}

TEST_P(ClientTest, SlowServerHitsTheTimeoutThenRecovers) {
  if (!backend_->CanPause()) GTEST_SKIP() << "cannot pause an in-process server";
  ASSERT_TRUE(client_->command_sync("SET", "a", "value-of-a").ok());
  ASSERT_TRUE(client_->command_sync("SET", "b", "value-of-b").ok());
  backend_->Pause();
  auto start = Clock::now();
  auto r = client_->execute_sync(Command("GET", "a"), CallOptions{200ms});
  auto took = Clock::now() - start;
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.error().is(Errc::kTimeout)) << r.error().ToString();
  EXPECT_GE(took, 190ms);
  EXPECT_LT(took, 1500ms);
  backend_->Resume();
  // The late reply to GET a must never reach this caller.
  auto b = client_->command_sync("GET", "b");
  ASSERT_TRUE(b.ok()) << b.error().ToString();
  EXPECT_EQ(b->str, "value-of-b");
}

TEST_P(ClientTest, ServerKilledMidCallFailsTheCallWithoutWaitingForTheTimeout) {
  if (!backend_->CanPause()) GTEST_SKIP() << "cannot pause an in-process server";
  auto options = backend_->Options();
  options.call_timeout = 10s;
  Client client(options);
  ASSERT_TRUE(client.command_sync("PING").ok());
  backend_->Pause();  // the call is written and then waits for a reply that never comes
  auto call = std::async(std::launch::async, [&] { return client.command_sync("GET", "x"); });
  ASSERT_TRUE(Eventually([&] { return UnreadBytesAtServer(backend_->port()) > 0; }))
      << "the GET never reached the paused server";
  auto start = Clock::now();
  backend_->Kill();
  ASSERT_EQ(call.wait_for(5s), std::future_status::ready);
  auto r = call.get();
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.error().is(Errc::kConnectionLost)) << r.error().ToString();
  EXPECT_LT(Clock::now() - start, 3s);
  ASSERT_TRUE(backend_->Restart());
  Result<Reply> ok = Errc::kTimeout;
  for (int i = 0; i < 50 && !ok.ok(); ++i) {
    ok = client.command_sync("PING");
    if (!ok.ok()) std::this_thread::sleep_for(50ms);
  }
  EXPECT_TRUE(ok.ok()) << ok.error().ToString();
}

TEST_P(ClientTest, ClientSetnameAndCapabilities) {
  auto options = backend_->Options();
  options.client_name = "latch-test";
  Client client(options);
  auto name = client.command_sync("CLIENT", "GETNAME");
  ASSERT_TRUE(name.ok());
  if (name->is_error()) GTEST_SKIP() << "no CLIENT GETNAME: " << name->str;
  EXPECT_EQ(name->str, "latch-test");
}

TEST_P(ClientTest, ClosingTheClientFailsNothingTwice) {
  auto options = backend_->Options();
  auto client = std::make_unique<Client>(options);
  std::atomic<int> calls{0};
  for (int i = 0; i < 100; ++i) {
    client->async_execute(Command("PING"), {}, [&](Result<Reply>) { ++calls; });
  }
  client.reset();  // completes every pending call (with a reply or kClientClosed) before returning
  EXPECT_EQ(calls.load(), 100);
}

INSTANTIATE_TEST_SUITE_P(Backends, ClientTest, ::testing::ValuesIn(AllBackends()),
                         [](const auto& info) { return BackendName(info.param); });

// Redis-specific handshake features, checked against the reference server.
class RedisHandshakeTest : public ::testing::Test {
 protected:
  std::unique_ptr<Backend> Start() { return Backend::Start(BackendKind::kRedis); }
};

TEST_F(RedisHandshakeTest, Resp3WhenOfferedAndResp2OnRequest) {
  auto redis = Start();
  ASSERT_TRUE(redis->ok()) << redis->error();
  Client resp3(redis->Options());
  ASSERT_TRUE(resp3.command_sync("ZADD", "z", "1.5", "m").ok());
  auto score = resp3.command_sync("ZSCORE", "z", "m");
  ASSERT_TRUE(score.ok());
  EXPECT_EQ(score->type, ReplyType::kDouble);
  EXPECT_EQ(score->number, 1.5);
  auto options = redis->Options();
  options.protocol = 2;
  Client resp2(options);
  auto score2 = resp2.command_sync("ZSCORE", "z", "m");
  ASSERT_TRUE(score2.ok());
  EXPECT_EQ(*score2, Reply::Bulk("1.5"));
  auto hello = resp3.command_sync("HELLO");
  ASSERT_TRUE(hello.ok());
  ASSERT_NE(hello->Find("proto"), nullptr);
  EXPECT_EQ(hello->Find("proto")->integer, 3);
}

TEST_F(RedisHandshakeTest, AuthAndSelectFromTheUrl) {
  ChildServer redis(ChildServer::Kind::kRedis, {"--requirepass", "s3cret"});
  ASSERT_TRUE(redis.ok()) << redis.error();
  std::string base = "127.0.0.1:" + std::to_string(redis.port());
  for (int protocol : {2, 3}) {
    SCOPED_TRACE(protocol);
    auto options = ClientOptions::FromUrl("redis://:s3cret@" + base + "/3").value();
    options.protocol = protocol;
    Client client(options);
    ASSERT_EQ(client.command_sync("SET", "in3", "x")->str, "OK");
    auto db0 = ClientOptions::FromUrl("redis://default:s3cret@" + base).value();
    db0.protocol = protocol;
    Client other(db0);
    EXPECT_TRUE(other.command_sync("GET", "in3")->is_null());

    auto wrong = ClientOptions::FromUrl("redis://:nope@" + base).value();
    wrong.protocol = protocol;
    Client refused(wrong);
    auto r = refused.command_sync("PING");
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(r.error().is(Errc::kHandshakeFailed)) << r.error().ToString();
    EXPECT_NE(r.error().message.find("WRONGPASS"), std::string::npos) << r.error().message;
  }
}

// redis://host:port/N on latchd (issue 17): the client SELECTs N on connect and again after a
// reconnect, so writes land in database N before and after the server restarts.
TEST(ClientDatabaseTest, UrlDatabaseIsSelectedOnConnectAndAfterReconnect) {
  ChildServer latchd(ChildServer::Kind::kLatchd);
  ASSERT_TRUE(latchd.ok()) << latchd.error();
  const std::string base = "redis://127.0.0.1:" + std::to_string(latchd.port());
  Client in2(ClientOptions::FromUrl(base + "/2").value());
  ASSERT_EQ(in2.command_sync("SET", "k", "two")->str, "OK");
  Client in0(ClientOptions::FromUrl(base).value());
  EXPECT_TRUE(in0.command_sync("GET", "k")->is_null());
  EXPECT_EQ(in0.command_sync("SELECT", "2")->str, "OK");
  EXPECT_EQ(in0.command_sync("GET", "k")->str, "two");
  auto info = in2.command_sync("CLIENT", "INFO");
  ASSERT_TRUE(info.ok());
  EXPECT_NE(info->str.find(" db=2 "), std::string::npos) << info->str;

  latchd.Kill();
  ASSERT_TRUE(latchd.Restart()) << latchd.error();
  Result<Reply> set = in2.command_sync("SET", "after", "restart");
  for (int i = 0; i < 50 && !set.ok(); ++i) {  // the first call may meet the broken socket
    std::this_thread::sleep_for(20ms);
    set = in2.command_sync("SET", "after", "restart");
  }
  ASSERT_TRUE(set.ok()) << set.error().ToString();
  Client check(ClientOptions::FromUrl(base + "/2").value());
  EXPECT_EQ(check.command_sync("GET", "after")->str, "restart");
  Client check0(ClientOptions::FromUrl(base + "/0").value());
  EXPECT_TRUE(check0.command_sync("GET", "after")->is_null());
  // Past the configured databases: the handshake fails with the server's text.
  Client bad(ClientOptions::FromUrl(base + "/16").value());
  auto r = bad.command_sync("PING");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.error().is(Errc::kHandshakeFailed)) << r.error().ToString();
  EXPECT_NE(r.error().message.find("DB index is out of range"), std::string::npos)
      << r.error().message;
}

// ACL users from the URL (issue 12): redis://user:pass@host logs in as that user (HELLO 3
// AUTH or AUTH user pass), on latchd as on Redis; one team's user cannot DEL (nor, on
// latchd, LOCK.RELEASE) the other team's locks.
TEST(ClientAclTest, UserAndPasswordFromTheUrl) {
  for (auto kind : {ChildServer::Kind::kRedis, ChildServer::Kind::kLatchd}) {
    ChildServer server(kind, {});
    ASSERT_TRUE(server.ok()) << server.error();
    const std::string base = "127.0.0.1:" + std::to_string(server.port());
    Client admin(ClientOptions::FromUrl("redis://" + base).value());
    for (const char* team : {"payments", "reporting"}) {
      ASSERT_EQ(admin.command_sync("ACL", "SETUSER", team, "on", std::string(">") + team + "-pw",
                                   std::string("~lock:") + team + ":*", "+@all")
                    ->str,
                "OK");
    }
    ASSERT_EQ(admin.command_sync("SET", "lock:payments:1", "tok")->str, "OK");
    for (int protocol : {2, 3}) {
      SCOPED_TRACE(protocol);
      auto options = ClientOptions::FromUrl("redis://reporting:reporting-pw@" + base).value();
      options.protocol = protocol;
      Client reporting(options);
      EXPECT_EQ(reporting.command_sync("ACL", "WHOAMI")->str, "reporting");
      const std::string denied =
          "NOPERM this user has no permissions to access one of the keys used as arguments";
      auto del = reporting.command_sync("DEL", "lock:payments:1");
      ASSERT_TRUE(del.ok()) << del.error().ToString();
      EXPECT_TRUE(del->is_error());
      EXPECT_EQ(del->str, denied);
      if (kind == ChildServer::Kind::kLatchd) {
        EXPECT_EQ(reporting.command_sync("LOCK.RELEASE", "lock:payments:1", "tok")->str, denied);
      }
      auto wrong = ClientOptions::FromUrl("redis://reporting:nope@" + base).value();
      wrong.protocol = protocol;
      Client refused(wrong);
      auto r = refused.command_sync("PING");
      ASSERT_FALSE(r.ok());
      EXPECT_NE(r.error().message.find("WRONGPASS"), std::string::npos) << r.error().message;
    }
    EXPECT_EQ(admin.command_sync("GET", "lock:payments:1")->str, "tok");
  }
}

TEST(ClientOptionsTest, UrlsAsRedisUsersWriteThem) {
  auto e = Endpoint::Parse("redis://app:p%40ss@cache.local:6390/2").value();
  EXPECT_EQ(e.user, "app");
  EXPECT_EQ(e.password, "p@ss");
  EXPECT_EQ(e.host, "cache.local");
  EXPECT_EQ(e.port, 6390);
  EXPECT_EQ(e.db, 2);
  EXPECT_EQ(e.ToString(), "redis://app:***@cache.local:6390/2");
  auto bare = Endpoint::Parse("redis://localhost").value();
  EXPECT_EQ(bare.port, 6379);
  EXPECT_EQ(bare.db, 0);
  auto pw = Endpoint::Parse("redis://:secret@h:1").value();
  EXPECT_EQ(pw.user, "");
  EXPECT_EQ(pw.password, "secret");
  auto v6 = Endpoint::Parse("redis://[::1]:7000").value();
  EXPECT_EQ(v6.host, "::1");
  EXPECT_EQ(v6.port, 7000);
  for (const char* bad : {"http://h:1", "redis://", "redis://h:99999", "redis://h:1/x",
                          "redis://[::1", "redis://h:abc", "redis://u:%zz@h"}) {
    auto r = Endpoint::Parse(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_TRUE(r.error().is(Errc::kInvalidArgument));
    }
  }
}

TEST(CommandTest, EncodesArgumentsAsMultibulk) {
  Command cmd("SET", std::string("k"), 42, "PX", std::chrono::milliseconds(1500), -7LL);
  EXPECT_EQ(cmd.argc(), 6u);
  EXPECT_EQ(cmd.name(), "SET");
  EXPECT_EQ(cmd.Encoded(),
            "*6\r\n$3\r\nSET\r\n$1\r\nk\r\n$2\r\n42\r\n$2\r\nPX\r\n$4\r\n1500\r\n$2\r\n-7\r\n");
}

}  // namespace
}  // namespace latch::test
