// latch::Lock against real servers: outcomes of acquire / release / extend, expiry reported
// as lost, contention, mutual exclusion, the guard and auto-renewal. TTLs are real time here
// (the servers run their own clocks), so they are short and every wait is bounded.
#include "latch/lock.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "backends.h"
#include "lock_scripts.h"
#include "support/eventually.h"

namespace latch::test {
namespace {

using namespace std::chrono_literals;
namespace scripts = client_internal::scripts;
using Clock = std::chrono::steady_clock;

class LockTest : public ::testing::TestWithParam<BackendKind> {
 protected:
  void SetUp() override {
    backend_ = Backend::Start(GetParam());
    ASSERT_TRUE(backend_ && backend_->ok()) << (backend_ ? backend_->error() : "no backend");
    client_ = std::make_unique<Client>(backend_->Options());
    std::string missing = Missing(*client_, Need::kLocks);
    if (!missing.empty()) GTEST_SKIP() << BackendName(GetParam()) << " lacks: " << missing;
    lock_ = std::make_unique<Lock>(*client_);
  }

  std::unique_ptr<Backend> backend_;
  std::unique_ptr<Client> client_;
  std::unique_ptr<Lock> lock_;
};

TEST_P(LockTest, AcquireReleaseOutcomes) {
  auto a = lock_->acquire_sync("res", 5s);
  ASSERT_TRUE(a.ok()) << a.error().ToString();
  EXPECT_EQ(a->key, "res");
  EXPECT_EQ(a->owner.size(), 32u);
  EXPECT_TRUE(a->valid());
  EXPECT_GT(a->valid_until, Clock::now() + 4s);
  // latchd grants through LOCK.ACQUIRE, which hands out fencing tokens; Redis's SET NX does not.
  EXPECT_EQ(a->fencing_token.has_value(), GetParam() != BackendKind::kRedis);

  auto b = lock_->acquire_sync("res", 5s);
  ASSERT_FALSE(b.ok());
  EXPECT_TRUE(b.error().is(Errc::kNotAcquired)) << b.error().ToString();

  Lease impostor = *a;
  impostor.owner = Lock::NewOwnerToken();
  EXPECT_NE(impostor.owner, a->owner);
  EXPECT_EQ(*lock_->release_sync(impostor), LeaseStatus::kNotOwner);
  EXPECT_EQ(*lock_->extend_sync(impostor, 5s), LeaseStatus::kNotOwner);

  EXPECT_EQ(*lock_->release_sync(*a), LeaseStatus::kOk);
  EXPECT_EQ(*lock_->release_sync(*a), LeaseStatus::kLost);
  auto c = lock_->acquire_sync("res", 5s);
  ASSERT_TRUE(c.ok()) << c.error().ToString();
  if (a->fencing_token && c->fencing_token) {
    EXPECT_GT(*c->fencing_token, *a->fencing_token);
  }
}

TEST_P(LockTest, ExpiryWhileHeldIsReportedAsLostThenNotOwner) {
  auto a = lock_->acquire_sync("exp", 100ms);
  ASSERT_TRUE(a.ok()) << a.error().ToString();
  // The server's clock is real: wait until it has let the key go and the lease's own deadline
  // (the request's start + TTL) has passed. Not one for the other: the server counts its
  // deadline from a whole millisecond, up to 1 ms before the request's start.
  ASSERT_TRUE(Eventually([&] {
    return client_->command_sync("EXISTS", "exp")->integer == 0 && Clock::now() >= a->valid_until;
  }));
  EXPECT_FALSE(a->valid());
  EXPECT_EQ(*lock_->extend_sync(*a, 1s), LeaseStatus::kLost);
  EXPECT_EQ(*lock_->release_sync(*a), LeaseStatus::kLost);
  auto b = lock_->acquire_sync("exp", 5s);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(*lock_->release_sync(*a), LeaseStatus::kNotOwner);
}

TEST_P(LockTest, ExtendMovesTheDeadline) {
  auto a = lock_->acquire_sync("ext", 300ms);
  ASSERT_TRUE(a.ok());
  auto before = a->valid_until;
  ASSERT_EQ(*lock_->extend_sync(*a, 10s), LeaseStatus::kOk);
  EXPECT_GT(a->valid_until, before + 9s);
  auto pttl = client_->command_sync("PTTL", "ext");
  EXPECT_GT(pttl->integer, 9000);
}

TEST_P(LockTest, WaitingAcquireGetsTheLockWhenReleased) {
  auto a = lock_->acquire_sync("wait", 10s);
  ASSERT_TRUE(a.ok());
  std::atomic<Clock::rep> releasing_at{0};  // when the holder sent its release
  auto releaser = std::async(std::launch::async, [&] {
    std::this_thread::sleep_for(200ms);  // the holder works a while: what the waiter waits for
    releasing_at = Clock::now().time_since_epoch().count();
    return lock_->release_sync(*a);
  });
  auto start = Clock::now();
  AcquireOptions wait;
  wait.wait = 3s;
  wait.retry_delay = 20ms;
  auto b = lock_->acquire_sync("wait", 10s, wait);
  const auto acquired_at = Clock::now();
  ASSERT_TRUE(b.ok()) << b.error().ToString();
  // Granted only after the holder let go, however the threads were scheduled.
  ASSERT_NE(releasing_at.load(), 0) << "acquired while the holder still held it";
  EXPECT_GT(acquired_at.time_since_epoch().count(), releasing_at.load());
  EXPECT_LT(acquired_at - start, 3s);
  EXPECT_EQ(*releaser.get(), LeaseStatus::kOk);

  wait.wait = 200ms;
  start = Clock::now();
  auto c = lock_->acquire_sync("wait", 10s, wait);
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(c.error().is(Errc::kNotAcquired));
  EXPECT_GE(Clock::now() - start, 190ms);
}

TEST_P(LockTest, FiftyAcquirersOneHolderAtATime) {
  constexpr int kAcquirers = 50;
  std::atomic<int> holders{0}, max_holders{0}, wins{0}, failures{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kAcquirers; ++i) {
    threads.emplace_back([&] {
      AcquireOptions wait;
      wait.wait = 30s;
      wait.retry_delay = 5ms;
      auto lease = lock_->acquire_sync("contended", 10s, wait);
      if (!lease.ok()) {
        ++failures;
        return;
      }
      int now = ++holders;
      int seen = max_holders.load();
      while (now > seen && !max_holders.compare_exchange_weak(seen, now)) {
      }
      std::this_thread::sleep_for(1ms);
      --holders;
      ++wins;
      if (*lock_->release_sync(*lease) != LeaseStatus::kOk) ++failures;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(wins.load(), kAcquirers);
  EXPECT_EQ(max_holders.load(), 1);
}

// Waiting on latchd is a blocking call on a connection of its own: a burst of waiters opens
// one connection each, and once they are served the client keeps at most max_idle_blocking
// of them.
TEST_P(LockTest, IdleBlockingConnectionsAreTrimmed) {
  if (GetParam() == BackendKind::kRedis) GTEST_SKIP() << "Redis waits by polling";
  Client observer(backend_->Options());
  auto connected = [&observer]() -> long {
    auto r = observer.command_sync("INFO", "clients");
    if (!r.ok()) return -1;
    const std::string& text = r->str;
    auto at = text.find("connected_clients:");
    return at == std::string::npos ? -1 : std::stol(text.substr(at + 18));
  };
  auto holder = lock_->acquire_sync("trim", 10s);
  ASSERT_TRUE(holder.ok());
  constexpr int kWaiters = 8;
  std::atomic<int> served{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kWaiters; ++i) {
    threads.emplace_back([&] {
      AcquireOptions wait;
      wait.wait = 10s;
      auto lease = lock_->acquire_sync("trim", 10s, wait);
      if (lease.ok() && *lock_->release_sync(*lease) == LeaseStatus::kOk) ++served;
    });
  }
  // All parked: the client's pool, one connection per waiter, the observer.
  const long parked = 1 + kWaiters + 1;
  long seen = 0;
  Eventually([&] { return (seen = connected()) >= parked; }, 5s);
  EXPECT_EQ(seen, parked);
  ASSERT_EQ(*lock_->release_sync(*holder), LeaseStatus::kOk);
  for (auto& t : threads) t.join();
  EXPECT_EQ(served.load(), kWaiters);
  const long trimmed = 1 + 2 + 1;  // pool, max_idle_blocking (default 2), observer
  Eventually([&] { return (seen = connected()) <= trimmed; }, 5s);
  EXPECT_EQ(seen, trimmed);
}

TEST_P(LockTest, CounterUnderTheLockLosesNoUpdate) {
  // A read-modify-write over the network loses updates unless the lock serialises it.
  ASSERT_TRUE(client_->command_sync("SET", "counter", 0).ok());
  constexpr int kWorkers = 6, kIncrements = 15;
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < kWorkers; ++w) {
    threads.emplace_back([&] {
      for (int i = 0; i < kIncrements; ++i) {
        AcquireOptions wait;
        wait.wait = 30s;
        wait.retry_delay = 2ms;
        auto lease = lock_->acquire_sync("counter-lock", 5s, wait);
        if (!lease.ok()) {
          ++errors;
          continue;
        }
        auto v = client_->command_sync("GET", "counter");
        if (!v.ok()) ++errors;
        std::this_thread::yield();
        if (v.ok()) client_->command_sync("SET", "counter", std::stoi(v->str) + 1);
        if (*lock_->release_sync(*lease) != LeaseStatus::kOk) ++errors;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(client_->command_sync("GET", "counter")->str, std::to_string(kWorkers * kIncrements));
}

TEST_P(LockTest, GuardReleasesOnScopeExit) {
  {
    auto lease = lock_->acquire_sync("guarded", 10s);
    ASSERT_TRUE(lease.ok());
    LockGuard guard(*lock_, *lease);
    EXPECT_FALSE(lock_->acquire_sync("guarded", 10s).ok());
  }
  auto again = lock_->acquire_sync("guarded", 10s);
  EXPECT_TRUE(again.ok());
}

TEST_P(LockTest, AutoRenewHoldsPastTheTtlAndReportsLossWhenTheServerStops) {
  // 600 ms: a renewal every 200 ms, so only a stall of 400 ms (not one of a loaded
  // machine's 200 ms ones) loses the lease.
  constexpr auto kTtl = 600ms;
  auto lease = lock_->acquire_sync("renewed", kTtl);
  ASSERT_TRUE(lease.ok());
  std::promise<Error> lost;
  RenewOptions options;
  options.on_lost = [&](const Error& e) { lost.set_value(e); };
  const auto first_deadline = lease->valid_until;
  auto renewal = lock_->auto_renew(*lease, kTtl, options);
  // Held for 3x the TTL: until a renewal sent that long after the acquire has succeeded
  // (each success moves valid_until to its request's start + TTL).
  EXPECT_TRUE(Eventually(
      [&] { return renewal->lost() || renewal->lease().valid_until > first_deadline + 3 * kTtl; },
      10s));
  EXPECT_FALSE(renewal->lost());
  EXPECT_FALSE(lock_->acquire_sync("renewed", kTtl).ok());
  EXPECT_TRUE(renewal->lease().valid());

  backend_->Kill();
  auto loss = lost.get_future();
  ASSERT_EQ(loss.wait_for(3s), std::future_status::ready);
  EXPECT_TRUE(loss.get().is(Errc::kLeaseLost));
  EXPECT_TRUE(renewal->lost());
  // Reported once the lease ran out: the renewer compares whole milliseconds left, so it
  // may say so up to 1 ms before valid_until.
  EXPECT_LE(renewal->lease().valid_until, Clock::now() + 1ms);
}

TEST_P(LockTest, AutoRenewReportsATakeover) {
  auto lease = lock_->acquire_sync("taken", 5s);
  ASSERT_TRUE(lease.ok());
  auto renewal = lock_->auto_renew(*lease, 300ms);
  // Someone deletes the key behind our back and takes it.
  ASSERT_TRUE(client_->command_sync("DEL", "taken").ok());
  ASSERT_TRUE(lock_->acquire_sync("taken", 5s).ok());
  ASSERT_TRUE(Eventually([&] { return renewal->lost(); }));
  EXPECT_NE(renewal->loss()->message.find("not-owner"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Backends, LockTest, ::testing::ValuesIn(AllBackends()),
                         [](const auto& info) { return BackendName(info.param); });

TEST(LockScriptsTest, ShaConstantsMatchTheServerAndNoscriptFallsBackToEval) {
  auto redis = Backend::Start(BackendKind::kRedis);
  ASSERT_TRUE(redis->ok()) << redis->error();
  Client client(redis->Options());
  EXPECT_EQ(client.command_sync("SCRIPT", "LOAD", scripts::kRelease)->str, scripts::kReleaseSha);
  EXPECT_EQ(client.command_sync("SCRIPT", "LOAD", scripts::kExtend)->str, scripts::kExtendSha);
  ASSERT_EQ(client.command_sync("SCRIPT", "FLUSH")->str, "OK");
  Lock lock(client);
  auto lease = lock.acquire_sync("k", 5s);
  ASSERT_TRUE(lease.ok());
  EXPECT_EQ(*lock.extend_sync(*lease, 5s), LeaseStatus::kOk);
  EXPECT_EQ(*lock.release_sync(*lease), LeaseStatus::kOk);
  // EVAL cached the scripts: EVALSHA works now.
  auto exists = client.command_sync("SCRIPT", "EXISTS", scripts::kReleaseSha, scripts::kExtendSha);
  ASSERT_EQ(exists->elements.size(), 2u);
  EXPECT_EQ(exists->elements[0].integer, 1);
  EXPECT_EQ(exists->elements[1].integer, 1);
}

}  // namespace
}  // namespace latch::test
