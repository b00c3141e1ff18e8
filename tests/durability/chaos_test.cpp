// The chaos test: many clients fight over a few hot keys with short TTLs against a real latchd
// that is killed with -9 and restarted, paused with SIGSTOP/SIGCONT, and whose clients drop
// their connections; then the recorded history is checked (lease_history.h). The harness is
// chaos_harness.h, shared with the soak (soak_test.cpp).
//
// Required: no overlap and no token out of order with appendfsync always, and with
// lock-restart-delay >= the TTL; and with neither, the checker must find overlaps (it can see
// them). Each mode runs LATCH_CHAOS_SECONDS (default 12) seconds; counts are printed.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "durability/chaos_harness.h"
#include "durability/lease_history.h"

namespace latch::test {
namespace {

constexpr std::int64_t kTtlMs = ChaosOptions{}.ttl_ms;

TEST(ChaosTest, AppendfsyncAlwaysNeverGrantsAHeldLock) {
  Chaos chaos({"--appendonly", "yes", "--appendfsync", "always"});
  const Counts c = chaos.Run(ChaosSeconds());
  Print("appendfsync always", c);
  EXPECT_GT(c.kills, 0u);
  EXPECT_GT(c.verdict.leases, 50u);
  EXPECT_EQ(c.verdict.overlaps, 0u) << c.verdict.first_overlap;
  EXPECT_EQ(c.verdict.token_order, 0u);
  EXPECT_EQ(c.fenced_accepted_below, 0u);
}

TEST(ChaosTest, LockRestartDelayOfOneTtlNeverGrantsAHeldLock) {
  Chaos chaos({"--lock-restart-delay", std::to_string(kTtlMs)});
  const Counts c = chaos.Run(ChaosSeconds());
  Print("lock-restart-delay = TTL", c);
  EXPECT_GT(c.kills, 0u);
  EXPECT_GT(c.verdict.leases, 50u);
  EXPECT_EQ(c.verdict.overlaps, 0u) << c.verdict.first_overlap;
  EXPECT_EQ(c.verdict.token_order, 0u);
  EXPECT_EQ(c.fenced_accepted_below, 0u);
}

// everysec: a reply goes out after its records were write()n (only the fdatasync waits for
// the next second), so against kill -9 it promises what always does (a machine crash is
// another matter). Half the time of the others: the always run covers the same paths.
TEST(ChaosTest, AppendfsyncEverysecNeverGrantsAHeldLockAfterKill9) {
  Chaos chaos({"--appendonly", "yes", "--appendfsync", "everysec"});
  const Counts c = chaos.Run(std::max(1, ChaosSeconds() / 2));
  Print("appendfsync everysec", c);
  EXPECT_GT(c.kills, 0u);
  EXPECT_GT(c.verdict.leases, 25u);
  EXPECT_EQ(c.verdict.overlaps, 0u) << c.verdict.first_overlap;
  EXPECT_EQ(c.verdict.token_order, 0u);
  EXPECT_EQ(c.fenced_accepted_below, 0u);
}

// Proves the checker sees what it checks for: no journal, no delay, and the crashes do let a
// second client in while the first still holds a valid lease.
TEST(ChaosTest, WithoutJournalOrDelayTheCheckerFindsOverlaps) {
  Chaos chaos({});
  const Counts c = chaos.Run(ChaosSeconds());
  Print("no journal, no delay", c);
  EXPECT_GT(c.kills, 0u);
  EXPECT_GT(c.verdict.overlaps, 0u) << "the checker must see the unsafe restarts";
  EXPECT_EQ(c.fenced_accepted_below, 0u);
}

// The checker itself, on histories whose answer is known.
TEST(LeaseHistoryTest, FindsOverlapsAndTokenDisorderOnlyWhereThere) {
  auto lease = [](int client, std::uint64_t token, std::int64_t sent_ms, std::int64_t got_ms,
                  std::int64_t released_ms) {
    Lease l;
    l.key = 0;
    l.client = client;
    l.token = token;
    l.sent_us = sent_ms * 1000;
    l.granted_us = got_ms * 1000;
    l.released_us = released_ms * 1000;
    l.ttl_ms = 100;
    return l;
  };
  // Back to back: released before the next grant.
  HistoryVerdict v = CheckHistory({lease(1, 10, 0, 1, 50), lease(2, 11, 40, 51, 90)});
  EXPECT_EQ(v.overlaps, 0u);
  EXPECT_EQ(v.token_order, 0u);
  // The first never released (crash): valid until 0 + 100 - 3 = 97 ms; a grant at 60 overlaps.
  v = CheckHistory({lease(1, 10, 0, 1, 0), lease(2, 11, 55, 60, 80)});
  EXPECT_EQ(v.overlaps, 1u);
  // ... but not a grant at 98 ms.
  v = CheckHistory({lease(1, 10, 0, 1, 0), lease(2, 11, 95, 98, 120)});
  EXPECT_EQ(v.overlaps, 0u);
  // A later grant with a lower token.
  v = CheckHistory({lease(1, 10, 0, 1, 5), lease(2, 9, 10, 12, 20)});
  EXPECT_EQ(v.token_order, 1u);
  FencedResource r(1);
  EXPECT_TRUE(r.Write(0, 5));
  EXPECT_FALSE(r.Write(0, 4));
  EXPECT_TRUE(r.Write(0, 5));
  EXPECT_EQ(r.refused(), 1u);
  EXPECT_EQ(r.accepted_below_seen(), 0u);
}

}  // namespace
}  // namespace latch::test
