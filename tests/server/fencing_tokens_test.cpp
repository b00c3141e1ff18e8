// The fencing-token counter and its durable reservations (store/fencing_tokens.h): no token
// leaves Next() above a limit that was made durable, the limit is moved on a few times a
// minute by Refill and not by the grants, and the counter stays inside the signed 64-bit range
// whatever the wall clock says.
#include "store/fencing_tokens.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

namespace latch::store {
namespace {

// Records every reservation; `durable` is the highest limit it accepted.
class FakeReservations final : public TokenReservations {
 public:
  bool Reserve(std::uint64_t limit) override {
    ++calls;
    if (!from_refill.load()) ++from_grants;
    if (!ok) return false;
    std::uint64_t d = durable.load();
    while (d < limit && !durable.compare_exchange_weak(d, limit)) {
    }
    return true;
  }
  std::atomic<int> calls{0}, from_grants{0};
  std::atomic<bool> from_refill{false};
  std::atomic<std::uint64_t> durable{0};
  bool ok = true;
};

constexpr std::int64_t kWallUs = 1'796'000'000'000'000;  // December 2026
constexpr std::int64_t kSecondUs = 1'000'000;

TEST(FencingTokensTest, NoTokenAboveTheDurableLimitAndAFewReservationsAMinute) {
  FencingTokens tokens;
  FakeReservations r;
  std::int64_t wall = kWallUs;
  ASSERT_TRUE(tokens.UseReservations(&r, wall));
  r.from_grants = 0;
  r.calls = 0;
  // One minute of wall clock, a grant every millisecond, the refill every 250 ms.
  for (int ms = 0; ms < 60'000; ++ms) {
    wall += 1000;
    const std::uint64_t token = tokens.Next(wall);
    ASSERT_LE(token, r.durable.load()) << "at " << ms << " ms";
    if (ms % 250 == 0) {
      r.from_refill = true;
      tokens.Refill(wall);
      r.from_refill = false;
    }
  }
  EXPECT_EQ(r.from_grants.load(), 0) << "a grant never waited for the disk";
  // The limit runs 10 s ahead and is moved when less than 5 s are left: every ~5 s.
  EXPECT_GE(r.calls.load(), 10);
  EXPECT_LE(r.calls.load(), 14);
}

TEST(FencingTokensTest, AWallClockJumpReservesBeforeTheTokenLeaves) {
  FencingTokens tokens;
  FakeReservations r;
  ASSERT_TRUE(tokens.UseReservations(&r, kWallUs));
  const std::int64_t later = kWallUs + 3600 * kSecondUs;  // NTP stepped the clock forward
  const std::uint64_t token = tokens.Next(later);
  EXPECT_GE(token, static_cast<std::uint64_t>(later) * 1000);
  EXPECT_LE(token, r.durable.load());
  EXPECT_EQ(r.from_grants.load(), 2);  // UseReservations's, then this grant's
  // A restart that finds this limit starts above every token given, an hour earlier or not.
  FencingTokens restarted;
  restarted.AtLeast(r.durable.load());
  EXPECT_GT(restarted.Next(kWallUs), token);
}

TEST(FencingTokensTest, AFailedReservationIsNotRetriedByEveryGrant) {
  FencingTokens tokens;
  FakeReservations r;
  r.ok = false;
  EXPECT_FALSE(tokens.UseReservations(&r, kWallUs));
  for (int i = 0; i < 1000; ++i) tokens.Next(kWallUs + i);
  EXPECT_EQ(r.calls.load(), 1) << "the reservation's owner retries in the background";
}

TEST(FencingTokensTest, StaysInsideTheSignedRangeWhateverTheWallClockSays) {
  FencingTokens tokens;
  const std::uint64_t first = tokens.Next(INT64_MAX);
  EXPECT_EQ(first, FencingTokens::kMaxWallToken);
  EXPECT_EQ(tokens.Next(INT64_MAX), first + 1);
  EXPECT_LE(tokens.Next(INT64_MAX), static_cast<std::uint64_t>(INT64_MAX));
  EXPECT_TRUE(FencingTokens::Valid(FencingTokens::kMaxValidToken));
  EXPECT_FALSE(FencingTokens::Valid(static_cast<std::uint64_t>(INT64_MAX)));
  EXPECT_FALSE(FencingTokens::Valid(UINT64_MAX));
  // From the largest token a journal may carry, 2^61 grants remain before INT64_MAX.
  FencingTokens restored;
  restored.AtLeast(FencingTokens::kMaxValidToken);
  EXPECT_EQ(restored.Next(kWallUs), FencingTokens::kMaxValidToken + 1);
}

// Grants on several threads while the refill runs: each token is covered by a durable limit
// by the time Next() returns it.
TEST(FencingTokensTest, ConcurrentGrantsAreCoveredWhenTheyLeave) {
  FencingTokens tokens;
  FakeReservations r;
  ASSERT_TRUE(tokens.UseReservations(&r, kWallUs));
  std::atomic<std::int64_t> wall{kWallUs};
  std::atomic<bool> done{false};
  std::atomic<int> uncovered{0};
  std::thread refill([&] {
    while (!done) tokens.Refill(wall.load());
  });
  std::vector<std::thread> grants;
  for (int t = 0; t < 4; ++t) {
    grants.emplace_back([&] {
      for (int i = 0; i < 20'000; ++i) {
        const std::uint64_t token = tokens.Next(wall.fetch_add(100));  // 100 us per grant
        if (token > r.durable.load()) uncovered.fetch_add(1);
      }
    });
  }
  for (auto& g : grants) g.join();
  done = true;
  refill.join();
  EXPECT_EQ(uncovered.load(), 0);
}

// A cluster node (docs/CLUSTER.md, "Fencing tokens"): max(last + 1, term << 40), the wall
// clock ignored; the floor only rises with the term, and tokens applied from the log
// (AtLeast) still count.
TEST(FencingTokensTest, TermFloorReplacesTheWallClockAndOnlyRises) {
  FencingTokens tokens;
  tokens.UseTermFloor(0);
  EXPECT_EQ(tokens.Next(kWallUs), 1u);
  tokens.UseTermFloor(3);
  EXPECT_EQ(tokens.Next(kWallUs), std::uint64_t{3} << 40);
  EXPECT_EQ(tokens.Next(kWallUs), (std::uint64_t{3} << 40) + 1);
  tokens.UseTermFloor(2);  // an older term: no change
  EXPECT_EQ(tokens.Next(kWallUs), (std::uint64_t{3} << 40) + 2);
  tokens.AtLeast(std::uint64_t{4} << 40);  // an entry of term 4, applied before serving
  tokens.UseTermFloor(4);
  EXPECT_EQ(tokens.Next(kWallUs), (std::uint64_t{4} << 40) + 1);
  tokens.UseTermFloor(std::uint64_t{1} << 30);  // capped, still below the loader's limit
  const std::uint64_t capped = tokens.Next(kWallUs);
  EXPECT_EQ(capped, std::uint64_t{1} << 61);
  EXPECT_TRUE(FencingTokens::Valid(capped));
}

}  // namespace
}  // namespace latch::store
