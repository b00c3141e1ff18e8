#pragma once
// GoogleTest glue for latch::testing (include only where GoogleTest is linked; the rest of the
// kit does not need it):
//
//   class OrdersTest : public latch::testing::LatchTest {};
//   TEST_F(OrdersTest, LockTimesOut) {
//     auto client = Connect(latch().url());
//     ...
//     latch().Advance(30s);
//     EXPECT_LATCH(latch().CheckMissing("lock:order:1"));
//   }
#include <gtest/gtest.h>

#include <memory>

#include "latch/testing/scoped_server.h"

namespace latch::testing {

inline ::testing::AssertionResult Holds(const CheckResult& r) {
  if (r.ok) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << r.message;
}

// A fresh ScopedServer per test (started before SetUp's body, stopped after TearDown).
// Override Configure() to change its options.
class LatchTest : public ::testing::Test {
 protected:
  virtual Options Configure() { return ScopedServer::DefaultOptions(); }
  void SetUp() override { server_ = std::make_unique<ScopedServer>(Configure()); }
  void TearDown() override { server_.reset(); }
  ScopedServer& latch() { return *server_; }

 private:
  std::unique_ptr<ScopedServer> server_;
};

}  // namespace latch::testing

// EXPECT_LATCH(server.CheckGet("k", "v")): fails with the check's diff.
#define EXPECT_LATCH(check) EXPECT_TRUE(::latch::testing::Holds(check))
#define ASSERT_LATCH(check) ASSERT_TRUE(::latch::testing::Holds(check))
