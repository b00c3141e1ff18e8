#pragma once
// Hierarchical timer wheel for key TTLs, built for timers that are mostly cancelled before
// they fire (a released lock cancels its TTL).
//
// - Timers are intrusive: the owner embeds a TimerNode (the store's Object does), so
//   Schedule and Cancel are O(1) and never allocate.
// - Resolution is 1 ms. A node sits on the level given by the highest bit in which its
//   deadline differs from the wheel's time (6 bits per level), in the slot given by the
//   deadline's bits of that level. 11 levels cover all 64 bits, so every deadline up to
//   INT64_MAX has a place: long TTLs (years) are never dropped, and there is no overflow
//   list to rescan. A node moves down (cascades) at most once per level.
// - Each level keeps a 64-bit occupancy mask, so Advance jumps straight to the next
//   non-empty slot: a jump of days after a long idle costs O(levels), not O(ms).
// - Advance(now, budget, fn) fires every node whose deadline <= now, in deadline order
//   (nodes scheduled when already due fire after those already queued), never before their
//   deadline, and at most `budget` nodes per call; the rest fire on the next call. Cascading
//   is also bounded per call (cascade_limit moves), so one call does bounded work even when a
//   high slot holds a million nodes.
// - Not thread-safe: one wheel per shard, used under that shard's lock.
// - Nodes hold pointers into the wheel: cancel (or drop) every node before the wheel dies.
#include <array>
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
  // Node moves per Advance call spent on cascading by default: about a millisecond of work.
  static constexpr std::size_t kDefaultCascadeLimit = 1 << 16;

  // now_ms: the monotonic time the wheel starts at. cascade_limit (>= 1): at most this many
  // nodes are moved between levels per Advance call.
  explicit TimerWheel(std::int64_t now_ms, std::size_t cascade_limit = kDefaultCascadeLimit);
  TimerWheel(const TimerWheel&) = delete;
  TimerWheel& operator=(const TimerWheel&) = delete;

  // n must not be scheduled. A deadline <= the wheel's current time fires on the next Advance.
  void Schedule(TimerNode* n, std::int64_t deadline_ms);
  // Unlinks n if scheduled; no-op otherwise.
  void Cancel(TimerNode* n);

  // Moves the wheel towards now_ms and calls fn(TimerNode*) for up to `budget` expired nodes.
  // Each node is unlinked (scheduled() == false) before fn sees it; fn may free it and may
  // Schedule/Cancel any node, the fired one included. Returns the number fired. Fewer than
  // `budget` means nothing due is left, or this call's cascade allowance ran out (only with
  // very many nodes in one slot): either way the next call carries on. A now_ms behind now()
  // is taken as now().
  template <class Fn>
  std::size_t Advance(std::int64_t now_ms, std::size_t budget, Fn&& fn) {
    std::size_t fired = 0;
    std::size_t moves_left = cascade_limit_;
    while (fired < budget) {
      TimerNode* n = PopExpired(now_ms, moves_left);
      if (n == nullptr) break;
      fn(n);
      ++fired;
    }
    return fired;
  }

  std::size_t size() const { return size_; }
  // The wheel's time: the latest point it has fully processed, <= the last now_ms given.
  std::int64_t now() const { return now_; }

  // 11 levels of 64 slots: level L holds deadlines that first differ from now() in bits
  // [6L, 6L+6); 66 bits >= 64, so every int64 deadline fits.
  static constexpr int kSlotBits = 6;
  static constexpr int kSlots = 1 << kSlotBits;
  static constexpr int kLevels = (64 + kSlotBits - 1) / kSlotBits;

 private:
  // Returns one node whose deadline <= now_ms (unlinked), or nullptr when none is left or
  // moves_left ran out; advances the wheel's time as far as it can towards now_ms.
  TimerNode* PopExpired(std::int64_t now_ms, std::size_t& moves_left);
  // Links n (deadline set) into due_ or its slot relative to now_.
  void Place(TimerNode* n);
  // Re-places the nodes of the slot being cascaded; false if moves_left ran out first.
  bool CascadePending(std::size_t& moves_left);
  // The level-0 list with deadline == now_ moves to due_ as a whole.
  void SpliceIntoDue(TimerNode* head);
  std::int64_t SlotStart(int level, int slot) const;
  int CurrentSlot(int level) const;
  TimerNode& Head(int level, int slot) { return heads_[level * kSlots + slot]; }
  void ClearIfEmptyHead(TimerNode* p);

  std::int64_t now_;
  std::size_t size_ = 0;
  std::size_t cascade_limit_;
  // Level whose current slot (CurrentSlot(level)) is being cascaded, or -1. Its nodes are
  // re-placed before anything else happens, so a cut-short cascade never hides a due node.
  int pending_level_ = -1;
  // Bit s of occupied_[L] is set iff slot s of level L is non-empty. Outside a pending
  // cascade, every occupied slot lies strictly after CurrentSlot(L), in the same revolution,
  // so the lowest non-empty level's lowest bit is always the next event.
  std::array<std::uint64_t, kLevels> occupied_{};
  // Sentinel heads of circular lists, self-linked when empty; heads_[L * kSlots + s].
  std::array<TimerNode, kLevels * kSlots> heads_;
  TimerNode due_;  // nodes already expired, waiting to be popped (FIFO)
};

}  // namespace latch::store
