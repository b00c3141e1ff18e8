// SystemClock's wall time against the system clock's own reading.
#include <gtest/gtest.h>

#include <chrono>

#include "latch/clock.h"

namespace latch {
namespace {

std::int64_t SystemMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// A PXAT deadline is converted with the snapshot's wall_ms: a wall_ms behind the system's
// (truncated) ms left PXAT now+10000 with a PTTL of 10001, more than Redis ever shows
// (Redis's own test suite, GETEX PXAT). Sampled many times: the truncation error showed in
// about half the samples.
TEST(SystemClockTest, WallMsIsNeverBehindTheSystemClock) {
  SystemClock clock;
  for (int i = 0; i < 2000; ++i) {
    const std::int64_t before = SystemMs();
    const TimeSnapshot now = clock.Now();
    ASSERT_GE(now.wall_ms, before) << "sample " << i;
    const TimeSnapshot same = clock.NowSameWallOffset();
    ASSERT_GE(same.wall_ms, before) << "sample " << i;
  }
}

}  // namespace
}  // namespace latch
