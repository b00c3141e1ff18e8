// Every way latch::Lock can talk to a server, forced one at a time: LOCK.* (latchd), Redis
// 8.4's compare commands (DELEX IFEQ / SET IFEQ GET; latchd implements them with 8.4's rules,
// and no 8.4 server is installed here) and the Lua scripts (Redis 7 and latchd). Each must
// report the same outcomes: ok, not-owner, lost.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <tuple>

#include "backends.h"
#include "latch/lock.h"
#include "support/eventually.h"

namespace latch::test {
namespace {

using namespace std::chrono_literals;

std::string MethodName(LockMethod m) {
  switch (m) {
    case LockMethod::kAuto:
      return "auto";
    case LockMethod::kLockCommands:
      return "lock_commands";
    case LockMethod::kCompareCommands:
      return "compare_commands";
    case LockMethod::kScripts:
      return "scripts";
  }
  return "unknown";
}

using Param = std::tuple<BackendKind, LockMethod>;

class LockMethodTest : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    backend_ = Backend::Start(std::get<0>(GetParam()));
    ASSERT_TRUE(backend_ && backend_->ok()) << (backend_ ? backend_->error() : "no backend");
    client_ = std::make_unique<Client>(backend_->Options());
    lock_ = std::make_unique<Lock>(*client_, std::get<1>(GetParam()));
  }

  std::unique_ptr<Backend> backend_;
  std::unique_ptr<Client> client_;
  std::unique_ptr<Lock> lock_;
};

TEST_P(LockMethodTest, OutcomesAreTheSameWhateverTheMethod) {
  auto a = lock_->acquire_sync("m:res", 5s);
  ASSERT_TRUE(a.ok()) << a.error().ToString();
  EXPECT_EQ(a->fencing_token.has_value(),
            std::get<1>(GetParam()) == LockMethod::kLockCommands);
  EXPECT_TRUE(lock_->acquire_sync("m:res", 5s).error().is(Errc::kNotAcquired));

  Lease impostor = *a;
  impostor.owner = Lock::NewOwnerToken();
  EXPECT_EQ(*lock_->release_sync(impostor), LeaseStatus::kNotOwner);
  EXPECT_EQ(*lock_->extend_sync(impostor, 5s), LeaseStatus::kNotOwner);
  EXPECT_EQ(client_->command_sync("GET", "m:res")->str, a->owner) << "the impostor changed it";

  ASSERT_EQ(*lock_->extend_sync(*a, 20s), LeaseStatus::kOk);
  EXPECT_GT(client_->command_sync("PTTL", "m:res")->integer, 15000);
  EXPECT_EQ(*lock_->release_sync(*a), LeaseStatus::kOk);
  EXPECT_EQ(client_->command_sync("EXISTS", "m:res")->integer, 0);
  EXPECT_EQ(*lock_->release_sync(*a), LeaseStatus::kLost);
  EXPECT_EQ(*lock_->extend_sync(*a, 5s), LeaseStatus::kLost);
  EXPECT_EQ(client_->command_sync("EXISTS", "m:res")->integer, 0) << "extend created the key";
}

TEST_P(LockMethodTest, ExpiredLeaseIsLostThenNotOwner) {
  auto a = lock_->acquire_sync("m:exp", 100ms);
  ASSERT_TRUE(a.ok()) << a.error().ToString();
  // The server's clock is real: wait until it has let the key go.
  ASSERT_TRUE(Eventually([&] { return client_->command_sync("EXISTS", "m:exp")->integer == 0; }));
  EXPECT_EQ(*lock_->extend_sync(*a, 1s), LeaseStatus::kLost);
  auto b = lock_->acquire_sync("m:exp", 5s);
  ASSERT_TRUE(b.ok()) << b.error().ToString();
  EXPECT_EQ(*lock_->release_sync(*a), LeaseStatus::kNotOwner);
  EXPECT_EQ(*lock_->release_sync(*b), LeaseStatus::kOk);
}

std::vector<Param> Params() {
  std::vector<Param> out = {{BackendKind::kRedis, LockMethod::kScripts}};
  for (BackendKind b : AllBackends()) {
    if (b != BackendKind::kLatchEmbedded) continue;
    for (LockMethod m :
         {LockMethod::kLockCommands, LockMethod::kCompareCommands, LockMethod::kScripts}) {
      out.emplace_back(b, m);
    }
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Methods, LockMethodTest, ::testing::ValuesIn(Params()),
                         [](const ::testing::TestParamInfo<Param>& info) {
                           return BackendName(std::get<0>(info.param)) + "_" +
                                  MethodName(std::get<1>(info.param));
                         });

TEST(LockMethod, ForcedMethodTheServerLacksIsUnsupported) {
  auto redis = Backend::Start(BackendKind::kRedis);
  ASSERT_TRUE(redis && redis->ok());
  Client client(redis->Options());
  for (LockMethod m : {LockMethod::kLockCommands, LockMethod::kCompareCommands}) {
    Lock lock(client, m);
    auto a = lock.acquire_sync("m:x", 1s);
    ASSERT_FALSE(a.ok()) << MethodName(m);
    EXPECT_TRUE(a.error().is(Errc::kUnsupported)) << a.error().ToString();
  }
  Lock automatic(client);
  auto a = automatic.acquire_sync("m:x", 1s);
  ASSERT_TRUE(a.ok()) << a.error().ToString();
  EXPECT_FALSE(a->fencing_token.has_value()) << "Redis 7: SET NX PX and scripts";
}

}  // namespace
}  // namespace latch::test
