// latch::Redlock over five independent servers: quorum with servers stopped, the validity and
// drift rules, release everywhere after a failed attempt, extend, several resources at once.
#include "latch/redlock.h"

#include <gtest/gtest.h>

#include <chrono>

#include "backends.h"

namespace latch::test {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

class RedlockTest : public ::testing::Test {
 protected:
  static constexpr int kServers = 5;

  void SetUp() override {
    for (int i = 0; i < kServers; ++i) {
      servers_.push_back(Backend::Start(BackendKind::kRedis));
      ASSERT_TRUE(servers_.back()->ok()) << servers_.back()->error();
      auto options = servers_.back()->Options();
      options.call_timeout = 300ms;
      clients_.push_back(std::make_unique<Client>(options));
      raw_.push_back(clients_.back().get());
    }
  }

  RedlockOptions FastRetries() const {
    RedlockOptions o;
    o.retry_count = 1;
    o.retry_delay = 20ms;
    o.retry_jitter = 10ms;
    return o;
  }

  // How many servers hold `key` right now.
  int Holding(const std::string& key) {
    int n = 0;
    for (int i = 0; i < kServers; ++i) {
      auto r = clients_[i]->command_sync("GET", key);
      if (r.ok() && !r->is_null()) ++n;
    }
    return n;
  }

  std::vector<std::unique_ptr<Backend>> servers_;
  std::vector<std::unique_ptr<Client>> clients_;
  std::vector<Client*> raw_;
};

TEST_F(RedlockTest, DriftAndValidityRules) {
  Redlock redlock(raw_);
  EXPECT_EQ(redlock.quorum(), 3);
  EXPECT_EQ(redlock.drift(10000ms), 102ms);  // 1% + 2 ms
  EXPECT_EQ(redlock.drift(100ms), 3ms);
  EXPECT_EQ(redlock.validity(10000ms, 100ms), 10000ms - 100ms - 102ms);
  EXPECT_EQ(redlock.validity(100ms, 97ms), std::nullopt);  // 100 - 97 - 3 = 0: not valid
  EXPECT_EQ(redlock.validity(100ms, 96ms), 1ms);
  EXPECT_EQ(Redlock(std::vector<Client*>(raw_.begin(), raw_.begin() + 4)).quorum(), 3);
}

TEST_F(RedlockTest, AcquireOnAllThenExclusiveThenRelease) {
  Redlock redlock(raw_, FastRetries());
  auto start = Clock::now();
  auto lease = redlock.acquire_sync({"job"}, 10s);
  ASSERT_TRUE(lease.ok()) << lease.error().ToString();
  EXPECT_EQ(lease->granted, 5);
  EXPECT_LE(lease->validity, 10s - redlock.drift(10s));
  EXPECT_LE(lease->valid_until, start + 10s - redlock.drift(10s) + 50ms);
  EXPECT_TRUE(lease->valid());
  EXPECT_EQ(Holding("job"), 5);

  auto other = redlock.acquire_sync({"job"}, 10s);
  ASSERT_FALSE(other.ok());
  EXPECT_TRUE(other.error().is(Errc::kNotAcquired));
  EXPECT_EQ(Holding("job"), 5);  // the loser's release-everywhere did not touch our keys

  EXPECT_EQ(*redlock.release_sync(*lease), 5);
  EXPECT_EQ(Holding("job"), 0);
  EXPECT_TRUE(redlock.acquire_sync({"job"}, 10s).ok());
}

TEST_F(RedlockTest, QuorumWithTwoServersStopped) {
  servers_[1]->Kill();
  servers_[3]->Kill();
  Redlock redlock(raw_, FastRetries());
  auto lease = redlock.acquire_sync({"q"}, 10s);
  ASSERT_TRUE(lease.ok()) << lease.error().ToString();
  EXPECT_EQ(lease->granted, 3);
  auto extended = redlock.extend_sync(*lease, 20s);
  ASSERT_TRUE(extended.ok()) << extended.error().ToString();
  EXPECT_GT(extended->valid_until, lease->valid_until);
  EXPECT_EQ(*redlock.release_sync(*lease), 3);
}

TEST_F(RedlockTest, RefusedWithThreeServersStoppedAndReleasedOnTheOthers) {
  servers_[0]->Kill();
  servers_[2]->Kill();
  servers_[4]->Kill();
  Redlock redlock(raw_, FastRetries());
  auto lease = redlock.acquire_sync({"q"}, 10s);
  ASSERT_FALSE(lease.ok());
  EXPECT_TRUE(lease.error().is(Errc::kNotAcquired));
  EXPECT_NE(lease.error().message.find("2 of 5"), std::string::npos) << lease.error().message;
  EXPECT_EQ(Holding("q"), 0);
}

TEST_F(RedlockTest, ExtendFailsWithoutQuorum) {
  Redlock redlock(raw_, FastRetries());
  auto lease = redlock.acquire_sync({"e"}, 10s);
  ASSERT_TRUE(lease.ok());
  servers_[0]->Kill();
  servers_[1]->Kill();
  servers_[2]->Kill();
  auto extended = redlock.extend_sync(*lease, 10s);
  ASSERT_FALSE(extended.ok());
  EXPECT_TRUE(extended.error().is(Errc::kLeaseLost));
}

TEST_F(RedlockTest, SlowAttemptPastTheTtlIsRefusedEvenWithAQuorum) {
  // One stopped server makes every attempt last its call timeout (300 ms); with a 250 ms TTL
  // the four grants are worthless by the time the quorum is counted.
  servers_[2]->Pause();
  Redlock redlock(raw_, FastRetries());
  auto start = Clock::now();
  auto lease = redlock.acquire_sync({"slow"}, 250ms);
  ASSERT_FALSE(lease.ok());
  EXPECT_TRUE(lease.error().is(Errc::kNotAcquired));
  EXPECT_GE(Clock::now() - start, 600ms);  // two attempts, each waiting for the timeout
  // With a TTL that outlasts the slow server the same quorum is enough; the validity pays for
  // the time spent.
  auto ok = redlock.acquire_sync({"slow2"}, 10s);
  ASSERT_TRUE(ok.ok()) << ok.error().ToString();
  EXPECT_EQ(ok->granted, 4);
  EXPECT_LE(ok->validity, 10s - 290ms - redlock.drift(10s));
  servers_[2]->Resume();
}

TEST_F(RedlockTest, SeveralResourcesAtOnce) {
  Redlock redlock(raw_, FastRetries());
  auto ab = redlock.acquire_sync({"a", "b"}, 10s);
  ASSERT_TRUE(ab.ok()) << ab.error().ToString();
  auto bc = redlock.acquire_sync({"b", "c"}, 10s);
  ASSERT_FALSE(bc.ok());
  EXPECT_EQ(Holding("c"), 0);  // the partial grant of c was released everywhere
  EXPECT_EQ(*redlock.release_sync(*ab), 5);
  EXPECT_TRUE(redlock.acquire_sync({"b", "c"}, 10s).ok());
}

// Any mix of servers: two redis-servers, two latchd processes, one embedded latch::Server.
TEST(RedlockMixedTest, RedisAndLatchdTogether) {
  std::vector<BackendKind> kinds = {BackendKind::kRedis, BackendKind::kRedis};
  for (auto k : AllBackends()) {
    if (k != BackendKind::kRedis) kinds.push_back(k);
  }
  if (kinds.size() < 4) GTEST_SKIP() << "built without the latchd backends";
  kinds.push_back(BackendKind::kLatchd);
  std::vector<std::unique_ptr<Backend>> servers;
  std::vector<std::unique_ptr<Client>> clients;
  std::vector<Client*> raw;
  for (auto k : kinds) {
    servers.push_back(Backend::Start(k));
    ASSERT_TRUE(servers.back()->ok()) << servers.back()->error();
    clients.push_back(std::make_unique<Client>(servers.back()->Options()));
    std::string missing = Missing(*clients.back(), Need::kLocks);
    if (!missing.empty()) GTEST_SKIP() << BackendName(k) << " lacks: " << missing;
    raw.push_back(clients.back().get());
  }
  Redlock redlock(raw);
  auto lease = redlock.acquire_sync({"mixed"}, 10s);
  ASSERT_TRUE(lease.ok()) << lease.error().ToString();
  EXPECT_EQ(lease->granted, 5);
  EXPECT_FALSE(redlock.acquire_sync({"mixed"}, 10s).ok());
  servers[0]->Kill();
  servers[2]->Kill();
  auto extended = redlock.extend_sync(*lease, 10s);
  ASSERT_TRUE(extended.ok()) << extended.error().ToString();
  EXPECT_EQ(extended->granted, 3);
  EXPECT_EQ(*redlock.release_sync(*lease), 3);
}

}  // namespace
}  // namespace latch::test
