#pragma once
// Time sources. TTLs run on the monotonic clock so that a wall-clock step never frees or
// extends a lock; wall time is only used to convert EXAT/PXAT/TIME and fencing seeds.
#include <atomic>
#include <cstdint>

namespace latch {

// One reading of both clocks, taken once per command so that a command sees one "now".
struct TimeSnapshot {
  std::int64_t mono_ms;  // monotonic milliseconds (arbitrary origin)
  std::int64_t wall_ms;  // Unix time in milliseconds
  std::int64_t wall_us;  // Unix time in microseconds (TIME)
  // Converts an absolute Unix time (ms) into the monotonic deadline that corresponds to it
  // now, and back. The pair is exact: WallToMono(MonoToWall(x)) == x.
  std::int64_t WallToMono(std::int64_t wall) const { return wall - wall_ms + mono_ms; }
  std::int64_t MonoToWall(std::int64_t mono) const { return mono - mono_ms + wall_ms; }
};

class Clock {
 public:
  virtual ~Clock() = default;
  virtual TimeSnapshot Now() const = 0;
  // Like Now(), but may skip noticing a wall-clock step (it is noticed at the next Now()).
  // A connection calls Now() once per batch of requests and this between its commands.
  virtual TimeSnapshot NowSameWallOffset() const { return Now(); }
  // NowSameWallOffset() at `steady_ns` (std::chrono::steady_clock, ns since its epoch), a
  // reading taken moments ago: a connection reuses the previous command's end instead of
  // reading the clock again (metrics/command_stats.h). Clocks of their own ignore it.
  virtual TimeSnapshot SameWallOffsetAt(std::int64_t /*steady_ns*/) const {
    return NowSameWallOffset();
  }
  std::int64_t MonoMs() const { return Now().mono_ms; }
};

// The real clocks. The wall-minus-monotonic offset is kept stable (re-read only when it
// moves by more than a couple of milliseconds, i.e. when the wall clock is stepped), so
// that PXAT followed by PEXPIRETIME returns exactly the value that was set.
class SystemClock final : public Clock {
 public:
  SystemClock();
  TimeSnapshot Now() const override;
  TimeSnapshot NowSameWallOffset() const override;  // one clock read instead of two
  TimeSnapshot SameWallOffsetAt(std::int64_t steady_ns) const override;  // no clock read

 private:
  mutable std::atomic<std::int64_t> offset_us_;
};

// A clock that moves only when told to: tests advance it and keys expire exactly as they
// would in real time. Thread-safe.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(std::int64_t wall_ms = 1'700'000'000'000, std::int64_t mono_ms = 1'000'000)
      : mono_ms_(mono_ms), wall_us_(wall_ms * 1000) {}
  TimeSnapshot Now() const override;
  // Moves both clocks forward.
  void advance(std::int64_t ms);
  // Steps the wall clock only (the monotonic clock does not move): to test that a wall-clock
  // jump neither frees nor extends a lock with a relative TTL.
  void step_wall(std::int64_t ms);

 private:
  std::atomic<std::int64_t> mono_ms_;
  std::atomic<std::int64_t> wall_us_;
};

}  // namespace latch
