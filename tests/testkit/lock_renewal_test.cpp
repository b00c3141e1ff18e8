// docs/TESTING.md, example 3: latch::Lock's auto-renewal against a server whose LOCK.EXTEND
// replies are late (TEST.FAULT DELAY), with the GoogleTest fixture. The server runs on the
// system clock here: renewal timing is real time on both sides.
#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "latch/client.h"
#include "latch/lock.h"
#include "latch/testing/gtest.h"
#include "support/eventually.h"

namespace latch::testing {
namespace {

using namespace std::chrono_literals;

class LockRenewalTest : public LatchTest {
 protected:
  Options Configure() override {
    Options o = ScopedServer::DefaultOptions();
    o.clock = std::make_shared<SystemClock>();
    return o;
  }
  void SetUp() override {
    LatchTest::SetUp();
    auto options = ClientOptions::FromUrl(latch().url());
    ASSERT_TRUE(options.ok());
    options->call_timeout = 1000ms;
    client_ = std::make_unique<Client>(*options);
    lock_ = std::make_unique<Lock>(*client_);
  }
  std::unique_ptr<Client> client_;
  std::unique_ptr<Lock> lock_;
};

// Renewals every 400 ms of a 1200 ms lease, each applied and answered 600 ms late: the lease
// never lapses. (200 ms of slack per renewal: at 300/100/150 ms, 50 ms of slack, a loaded
// machine, load 15, let the lease lapse once.)
TEST_F(LockRenewalTest, SurvivesRenewalsThatAreLateButInTime) {
  auto lease = lock_->acquire_sync("job", 1200ms);
  ASSERT_TRUE(lease.ok());
  ASSERT_EQ(
      client_->command_sync("TEST.FAULT", "DELAY", "600", "COMMAND", "lock.extend", "COUNT", "4")
          ->integer,
      1);
  auto renewal = lock_->auto_renew(*lease, 1200ms);
  // Until the four late renewals have been answered and a fifth has reached the server.
  EXPECT_TRUE(test::Eventually(
      [&] { return renewal->lost() || latch().CommandCount("lock.extend") >= 5; }, 20s));
  EXPECT_FALSE(renewal->lost());
  EXPECT_LATCH(latch().CheckLockOwner("job", lease->owner));
  EXPECT_EQ(latch().counters().faults.delays, 4u);
  EXPECT_GE(latch().CommandCount("lock.extend"), 5u);
}

// Every renewal answered after the lease ran out: the renewer reports the loss, and someone
// else can take the key.
TEST_F(LockRenewalTest, ReportsTheLossWhenRenewalsComeTooLate) {
  auto lease = lock_->acquire_sync("job", 200ms);
  ASSERT_TRUE(lease.ok());
  ASSERT_TRUE(
      client_->command_sync("TEST.FAULT", "DELAY", "400", "COMMAND", "lock.extend", "COUNT", "0")
          .ok());
  std::promise<Error> lost;
  RenewOptions options;
  options.on_lost = [&](const Error& e) { lost.set_value(e); };
  auto renewal = lock_->auto_renew(*lease, 200ms, options);
  auto loss = lost.get_future();
  ASSERT_EQ(loss.wait_for(3s), std::future_status::ready);
  EXPECT_TRUE(renewal->lost());
  EXPECT_FALSE(renewal->lease().valid());
  renewal.reset();
  latch().ClearFaults();
  EXPECT_TRUE(lock_->acquire_sync("job", 1s, AcquireOptions{.wait = 1s}).ok());
}

}  // namespace
}  // namespace latch::testing
