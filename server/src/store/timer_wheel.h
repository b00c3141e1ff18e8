#pragma once
// Hierarchical timer wheel for key TTLs, built for timers that are mostly cancelled before
// they fire (a released lock cancels its TTL).
//
// - Timers are intrusive: the owner embeds a TimerNode (the store's Object does), so
//   Schedule and Cancel are O(1) and never allocate.
// - Resolution is 1 ms. Deadlines beyond the wheel's horizon are kept on the top level and
//   re-placed when they come within range: long TTLs (years) are never dropped.
// - Advance(now, budget, fn) fires every node whose deadline <= now, in non-decreasing
//   deadline order within one level-0 slot, and at most `budget` nodes per call, so one
//   call does bounded work; nodes left over fire on the next call.
// - Not thread-safe: one wheel per shard, used under that shard's lock.
#include <cstddef>
#include <cstdint>

namespace latch::store {

struct TimerNode {
  TimerNode* prev = nullptr;  // nullptr when not scheduled
  TimerNode* next = nullptr;
  std::int64_t deadline = 0;  // monotonic ms; 0 = no deadline

  bool scheduled() const { return prev != nullptr; }
};

class TimerWheel {
 public:
  // now_ms: the monotonic time the wheel starts at.
  explicit TimerWheel(std::int64_t now_ms);
  TimerWheel(const TimerWheel&) = delete;
  TimerWheel& operator=(const TimerWheel&) = delete;

  // n must not be scheduled. A deadline <= the wheel's current time fires on the next Advance.
  void Schedule(TimerNode* n, std::int64_t deadline_ms);
  // Unlinks n if scheduled; no-op otherwise.
  void Cancel(TimerNode* n);

  // Moves the wheel to now_ms and calls fn(TimerNode*) for up to `budget` expired nodes.
  // Each node is unlinked (scheduled() == false) before fn sees it; fn may free it and may
  // Schedule/Cancel other nodes. Returns the number fired.
  template <class Fn>
  std::size_t Advance(std::int64_t now_ms, std::size_t budget, Fn&& fn) {
    std::size_t fired = 0;
    while (fired < budget) {
      TimerNode* n = PopExpired(now_ms);
      if (n == nullptr) break;
      fn(n);
      ++fired;
    }
    return fired;
  }

  std::size_t size() const { return size_; }
  std::int64_t now() const { return now_; }

  // Levels and slots: 6 levels of 64 slots cover 2^36 ms (~2 years) per revolution.
  static constexpr int kLevels = 6;
  static constexpr int kSlotBits = 6;
  static constexpr int kSlots = 1 << kSlotBits;

 private:
  // Returns one node whose deadline <= now_ms (unlinked), or nullptr when none is left;
  // advances the wheel's notion of time as far as it can towards now_ms.
  TimerNode* PopExpired(std::int64_t now_ms);
  void Place(TimerNode* n);

  std::int64_t now_;
  std::size_t size_ = 0;
  // Each slot is a circular list with a sentinel head.
  TimerNode slots_[kLevels][kSlots];
  TimerNode due_;  // nodes already expired, waiting to be popped
};

}  // namespace latch::store
