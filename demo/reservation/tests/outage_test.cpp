// The lock server or PostgreSQL goes away under a running service: 503 with a JSON error,
// no crash, and service again once PostgreSQL is back.
#include <chrono>
#include <thread>

#include "demo_fixture.h"
#include "support/free_port.h"

namespace latch::demo::test {
namespace {

using SteadyClock = std::chrono::steady_clock;

class OutageTest : public DemoTest {};

TEST_P(OutageTest, LockServerDownGives503) {
  int port = StartService();
  ASSERT_NE(port, 0);
  std::int64_t event = CreateEvent(port, 5);
  ASSERT_GT(event, 0);
  ASSERT_EQ(Reserve(port, event, "alice", {1}).status, 201);

  lock_server().Stop();
  const auto before = SteadyClock::now();
  HttpReply refused = Reserve(port, event, "bob", {2});
  EXPECT_EQ(refused.status, 503) << refused.error << refused.body;
  EXPECT_EQ(ErrorCodeOf(refused), "unavailable");
  EXPECT_LT(SteadyClock::now() - before, std::chrono::seconds(5));  // bounded by call timeouts
  HttpReply health = HttpCall(port, "GET", "/health");
  EXPECT_EQ(health.status, 503);
  EXPECT_EQ(StringField(ParseJson(health.body), "postgres"), "ok");
  EXPECT_NE(StringField(ParseJson(health.body), "lock_server"), "ok");
  // Nothing was booked without the lock, and reads that need no lock still work.
  EXPECT_EQ(QueryInt("SELECT count(*) FROM seats WHERE seat_no = 2 AND status = 'available'"), 1);
  HttpReply info = HttpCall(port, "GET", "/events/" + std::to_string(event));
  EXPECT_EQ(info.status, 200);
  EXPECT_EQ(IntField(ParseJson(info.body), "available"), 4);
}

TEST_P(OutageTest, PostgresDownGives503AndServiceResumes) {
  int port = StartService();
  ASSERT_NE(port, 0);
  std::int64_t event = CreateEvent(port, 5);
  ASSERT_GT(event, 0);
  ASSERT_EQ(Reserve(port, event, "alice", {1}).status, 201);

  // For this service the database goes away: its connections are cut and new ones refused.
  PostgresServer* pg = SharedPostgres();
  std::string error;
  ASSERT_TRUE(
      pg->Exec("postgres", "ALTER DATABASE " + database() + " ALLOW_CONNECTIONS false", &error))
      << error;
  ASSERT_TRUE(pg->Exec(
      "postgres",
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '" + database() + "'",
      &error))
      << error;

  HttpReply refused = Reserve(port, event, "bob", {2});
  EXPECT_EQ(refused.status, 503) << refused.error << refused.body;
  EXPECT_EQ(ErrorCodeOf(refused), "unavailable");
  HttpReply read = HttpCall(port, "GET", "/events/" + std::to_string(event));
  EXPECT_EQ(read.status, 503) << read.body;
  EXPECT_EQ(ErrorCodeOf(read), "unavailable");
  HttpReply health = HttpCall(port, "GET", "/health");
  EXPECT_EQ(health.status, 503);
  EXPECT_EQ(StringField(ParseJson(health.body), "lock_server"), "ok");

  ASSERT_TRUE(
      pg->Exec("postgres", "ALTER DATABASE " + database() + " ALLOW_CONNECTIONS true", &error))
      << error;
  int status = 0;
  const auto deadline = SteadyClock::now() + std::chrono::seconds(10);
  while (SteadyClock::now() < deadline) {
    status = HttpCall(port, "GET", "/health").status;
    if (status == 200) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  EXPECT_EQ(status, 200);
  HttpReply booked = Reserve(port, event, "bob", {2});
  EXPECT_EQ(booked.status, 201) << booked.body;
}

INSTANTIATE_TEST_SUITE_P(Backends, OutageTest,
                         ::testing::Values(LockBackend::kRedis, LockBackend::kLatchd), BackendName);

TEST(ServiceStartTest, UnreachablePostgresFailsStartWithTheReason) {
  ServiceOptions options;
  options.port = 0;
  options.pg_conninfo = "host=127.0.0.1 port=" + std::to_string(latch::test::FreePort()) +
                        " dbname=none user=latch connect_timeout=2";
  options.lock_url = "redis://127.0.0.1:1";
  Service service(options);
  try {
    service.Start();
    ADD_FAILURE() << "Start() succeeded without a database";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("PostgreSQL unavailable"), std::string::npos) << e.what();
  }
}

TEST(ServiceStartTest, BadLockUrlFailsStart) {
  ServiceOptions options;
  options.port = 0;
  options.pg_conninfo = "host=127.0.0.1";
  options.lock_url = "http://nope";
  Service service(options);
  EXPECT_THROW(service.Start(), std::runtime_error);
}

}  // namespace
}  // namespace latch::demo::test
