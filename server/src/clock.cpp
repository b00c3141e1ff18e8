#include "latch/clock.h"

#include <chrono>
#include <cstdlib>

namespace latch {
namespace {
std::int64_t MonoUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
std::int64_t MonoNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
std::int64_t WallUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}
constexpr std::int64_t kOffsetSlackUs = 2000;
// The offset in whole ms, rounded up: a snapshot's wall_ms is then (while the offset is
// current) never behind the wall clock's own reading truncated to ms, so a deadline given as
// a wall time (PXAT) never has more PTTL left on latchd than on Redis (rounded down, PXAT
// now+10000 showed PTTL 10001).
std::int64_t OffsetMs(std::int64_t offset_us) { return (offset_us + 999) / 1000; }
}  // namespace

SystemClock::SystemClock() : offset_us_(WallUs() - MonoUs()) {}

TimeSnapshot SystemClock::Now() const {
  std::int64_t mono = MonoUs();
  std::int64_t wall = WallUs();
  std::int64_t offset = offset_us_.load(std::memory_order_relaxed);
  if (std::llabs(wall - mono - offset) > kOffsetSlackUs) {
    offset = wall - mono;
    offset_us_.store(offset, std::memory_order_relaxed);
  }
  // Wall time derived from the stable offset, so conversions are exact between commands.
  std::int64_t mono_ms = mono / 1000;
  std::int64_t wall_ms = mono_ms + OffsetMs(offset);
  return TimeSnapshot{mono_ms, wall_ms, wall};
}

TimeSnapshot SystemClock::NowSameWallOffset() const { return SameWallOffsetAt(MonoNs()); }

TimeSnapshot SystemClock::SameWallOffsetAt(std::int64_t steady_ns) const {
  const std::int64_t mono = steady_ns / 1000;
  std::int64_t offset = offset_us_.load(std::memory_order_relaxed);
  std::int64_t mono_ms = mono / 1000;
  return TimeSnapshot{mono_ms, mono_ms + OffsetMs(offset), mono + offset};
}

TimeSnapshot ManualClock::Now() const {
  std::int64_t wall_us = wall_us_.load();
  return TimeSnapshot{mono_ms_.load(), wall_us / 1000, wall_us};
}

void ManualClock::advance(std::int64_t ms) {
  mono_ms_.fetch_add(ms);
  wall_us_.fetch_add(ms * 1000);
}

void ManualClock::step_wall(std::int64_t ms) { wall_us_.fetch_add(ms * 1000); }

}  // namespace latch
