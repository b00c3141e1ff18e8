// The soak (ctest -L soak, scripts/soak.sh; not part of scripts/test.sh or CI): the chaos
// harness (chaos_harness.h) run to LATCH_SOAK_GRANTS grants per mode (default 10^6) under the
// same faults as the chaos test: kill -9 and restart every 1-2.5 s, every third time a
// 200-600 ms SIGSTOP instead, dropped connections, and clients pausing past their TTL while
// holding a lock. To get there in reasonable time the work under each lock is 1-2 ms on 256
// keys (the chaos test's is 50-350 ms on 5). Each mode stops at LATCH_SOAK_MAX_SECONDS
// (default 1 h) if the grants have not come by then (the test then fails).
//
// Required, as for the chaos test: no overlap, no token out of order and no fenced write
// below a token seen, with appendfsync always or everysec, and with lock-restart-delay = TTL;
// without either, the checker must find overlaps (their number is printed).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "durability/chaos_harness.h"

namespace latch::test {
namespace {

std::uint64_t EnvNumber(const char* name, std::uint64_t fallback) {
  const char* env = std::getenv(name);
  return env != nullptr && *env != '\0' ? std::strtoull(env, nullptr, 10) : fallback;
}

ChaosOptions SoakOptions() {
  ChaosOptions o;
  o.keys = 256;
  o.clients = static_cast<int>(EnvNumber("LATCH_SOAK_CLIENTS", 48));
  o.ttl_ms = 500;  // as the chaos test: longer than a restart, so unsafe restarts show
  o.work_min_ms = 1;
  o.work_spread_ms = 2;  // 1 or 2 ms: a lease in use for a measurable while
  o.stall_one_in = 2000;
  o.drop_one_in = 2000;
  o.target_grants = EnvNumber("LATCH_SOAK_GRANTS", 1'000'000);
  return o;
}

// Runs one mode to its grants; returns the counts after printing them and the grant rate.
Counts Soak(const char* mode, std::vector<std::string> directives) {
  const ChaosOptions o = SoakOptions();
  Chaos chaos(std::move(directives), o);
  const Counts c = chaos.Run(static_cast<int>(EnvNumber("LATCH_SOAK_MAX_SECONDS", 3600)));
  Print(mode, c);
  std::printf("[soak]  %-28s grants=%zu in %.0f s: %.0f grants/s (%d clients, %d keys)\n", mode,
              c.grants, c.seconds, c.seconds > 0 ? static_cast<double>(c.grants) / c.seconds : 0.0,
              o.clients, o.keys);
  EXPECT_GE(c.grants, o.target_grants) << "not enough grants within the time limit";
  EXPECT_GT(c.kills, 0u);
  EXPECT_GT(c.pauses, 0u);
  EXPECT_EQ(c.fenced_accepted_below, 0u);
  return c;
}

void ExpectSafe(const Counts& c) {
  EXPECT_EQ(c.verdict.overlaps, 0u) << c.verdict.first_overlap;
  EXPECT_EQ(c.verdict.token_order, 0u);
}

TEST(SoakTest, AppendfsyncAlways) {
  ExpectSafe(Soak("appendfsync always", {"--appendonly", "yes", "--appendfsync", "always"}));
}

TEST(SoakTest, AppendfsyncEverysec) {
  ExpectSafe(Soak("appendfsync everysec", {"--appendonly", "yes", "--appendfsync", "everysec"}));
}

TEST(SoakTest, LockRestartDelayOfOneTtl) {
  ExpectSafe(Soak("lock-restart-delay = TTL",
                  {"--lock-restart-delay", std::to_string(SoakOptions().ttl_ms)}));
}

// The checker sees the unsafe restarts: their number is the figure to report.
TEST(SoakTest, WithoutJournalOrDelay) {
  const Counts c = Soak("no journal, no delay", {});
  EXPECT_GT(c.verdict.overlaps, 0u) << "the checker must see the unsafe restarts";
}

}  // namespace
}  // namespace latch::test
