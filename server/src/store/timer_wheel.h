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
// - Links are 32-bit handles, not pointers (half the bytes per key): the wheel asks its
//   Space to turn a handle into a node and back. Handles 1..kHeadCount name the wheel's own
//   list heads; the Space's handles start at kFirstSpaceHandle. The store's Space is its
//   slab (slab.h); PointerSpace serves nodes that live anywhere (tests, benchmarks).
// - The Space also stores each node's deadline (Deadline/SetDeadline): PointerSpace keeps
//   TimerNode::deadline as plain monotonic ms, while the store's SlabSpace packs it with the
//   object's access clock in the same 8 bytes (object.h), so the wheel never reads the field
//   itself.
// - Nodes link to the wheel's heads: cancel (or drop, via Reset) every node before the
//   wheel dies.
#include <array>
#include <bit>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace latch::store {

struct TimerNode {
  std::uint32_t prev = 0;  // 0 when not scheduled
  std::uint32_t next = 0;
  // The deadline as the Space stores it (PointerSpace: monotonic ms, 0 = none; the store's
  // objects pack more into it, see object.h): the wheel reads it only through its Space.
  std::int64_t deadline = 0;

  bool scheduled() const { return prev != 0; }
};

// Handles below this are the wheel's; a Space's handles are >= it.
inline constexpr std::uint32_t kFirstSpaceHandle = 1024;

// The deadline accessors of a Space whose nodes keep TimerNode::deadline as plain ms.
struct PlainDeadlines {
  static std::int64_t Deadline(const TimerNode* n) { return n->deadline; }
  static void SetDeadline(TimerNode* n, std::int64_t deadline_ms) { n->deadline = deadline_ms; }
};

// A Space for nodes anywhere in memory: a node gets a handle the first time it is seen.
// Lookups go through a hash map: for tests and benchmarks, not for the store.
class PointerSpace : public PlainDeadlines {
 public:
  TimerNode* Node(std::uint32_t h) const { return nodes_[h - kFirstSpaceHandle]; }
  std::uint32_t HandleOf(TimerNode* n) {
    auto [it, added] =
        handles_.try_emplace(n, static_cast<std::uint32_t>(kFirstSpaceHandle + nodes_.size()));
    if (added) nodes_.push_back(n);
    return it->second;
  }

 private:
  std::vector<TimerNode*> nodes_;
  std::unordered_map<const TimerNode*, std::uint32_t> handles_;
};

template <class Space>
class BasicTimerWheel {
 public:
  // Node moves per Advance call spent on cascading by default: about a millisecond of work.
  static constexpr std::size_t kDefaultCascadeLimit = 1 << 16;

  // 11 levels of 64 slots: level L holds deadlines that first differ from now() in bits
  // [6L, 6L+6); 66 bits >= 64, so every int64 deadline fits.
  static constexpr int kSlotBits = 6;
  static constexpr int kSlots = 1 << kSlotBits;
  static constexpr int kLevels = (64 + kSlotBits - 1) / kSlotBits;
  // The slot heads plus the due list; head i has handle i + 1.
  static constexpr std::uint32_t kHeadCount = kLevels * kSlots + 1;
  static_assert(kHeadCount < kFirstSpaceHandle);

  // now_ms: the monotonic time the wheel starts at. cascade_limit (>= 1): at most this many
  // nodes are moved between levels per Advance call.
  explicit BasicTimerWheel(std::int64_t now_ms,
                           std::size_t cascade_limit = kDefaultCascadeLimit,
                           Space space = Space())
      : space_(std::move(space)),
        now_(now_ms),
        cascade_limit_(cascade_limit == 0 ? 1 : cascade_limit) {
    Reset();
  }
  BasicTimerWheel(const BasicTimerWheel&) = delete;
  BasicTimerWheel& operator=(const BasicTimerWheel&) = delete;

  // n must not be scheduled. A deadline <= the wheel's current time fires on the next Advance.
  void Schedule(TimerNode* n, std::int64_t deadline_ms) {
    assert(!n->scheduled());
    space_.SetDeadline(n, deadline_ms);
    Place(n, space_.HandleOf(n));
    ++size_;
  }

  // Unlinks n if scheduled; no-op otherwise.
  void Cancel(TimerNode* n) {
    if (!n->scheduled()) return;
    const std::uint32_t before = n->prev;
    const std::uint32_t after = n->next;
    Unlink(n);
    --size_;
    // A list left with one element holds only its head: that slot became empty.
    if (before == after && before < kHeadCount) {  // the due list (kHeadCount) has no bit
      const std::uint32_t index = before - 1;
      occupied_[index / kSlots] &= ~(std::uint64_t{1} << (index % kSlots));
    }
  }

  // Forgets every node at once without touching them (their memory may be gone already).
  void Reset() {
    for (std::uint32_t i = 0; i < kHeadCount; ++i) heads_[i].prev = heads_[i].next = i + 1;
    occupied_ = {};
    size_ = 0;
    pending_level_ = -1;
  }

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

 private:
  static constexpr std::uint32_t kDue = kHeadCount;  // handle of the due list's head

  // Maps int64 time onto uint64 preserving order, so that negative times and INT64_MAX need
  // no special case. XOR of two keys equals XOR of the two times: only slot indices see the
  // bias.
  static constexpr std::uint64_t kBias = std::uint64_t{1} << 63;
  static constexpr std::uint64_t Key(std::int64_t t) {
    return static_cast<std::uint64_t>(t) ^ kBias;
  }
  static constexpr std::int64_t FromKey(std::uint64_t k) {
    return static_cast<std::int64_t>(k ^ kBias);
  }

  TimerNode* N(std::uint32_t h) { return h <= kHeadCount ? &heads_[h - 1] : space_.Node(h); }
  static constexpr std::uint32_t HeadHandle(int level, int slot) {
    return static_cast<std::uint32_t>(level * kSlots + slot) + 1;
  }
  bool Empty(std::uint32_t head) { return N(head)->next == head; }

  void PushBack(std::uint32_t head, TimerNode* n, std::uint32_t h) {
    TimerNode* hd = N(head);
    const std::uint32_t tail = hd->prev;
    n->prev = tail;
    n->next = head;
    N(tail)->next = h;
    hd->prev = h;
  }

  void Unlink(TimerNode* n) {
    N(n->prev)->next = n->next;
    N(n->next)->prev = n->prev;
    n->prev = n->next = 0;
  }

  // Links n (deadline set, handle h) into the due list or its slot relative to now_.
  void Place(TimerNode* n, std::uint32_t h) {
    const std::int64_t deadline = space_.Deadline(n);
    if (deadline <= now_) {
      PushBack(kDue, n, h);
      return;
    }
    const std::uint64_t diff = Key(deadline) ^ Key(now_);
    const int level = (63 - std::countl_zero(diff)) / kSlotBits;
    const int slot = static_cast<int>((Key(deadline) >> (level * kSlotBits)) & (kSlots - 1));
    PushBack(HeadHandle(level, slot), n, h);
    occupied_[level] |= std::uint64_t{1} << slot;
  }

  int CurrentSlot(int level) const {
    return static_cast<int>((Key(now_) >> (level * kSlotBits)) & (kSlots - 1));
  }

  std::int64_t SlotStart(int level, int slot) const {
    const int shift = level * kSlotBits;
    const int upper = shift + kSlotBits;
    const std::uint64_t high = upper >= 64 ? 0 : (Key(now_) >> upper) << upper;
    return FromKey(high | (static_cast<std::uint64_t>(slot) << shift));
  }

  // The level-0 list with deadline == now_ moves to the due list as a whole.
  void SpliceIntoDue(std::uint32_t head) {
    if (Empty(head)) return;
    TimerNode* hd = N(head);
    const std::uint32_t first = hd->next;
    const std::uint32_t last = hd->prev;
    TimerNode* due = N(kDue);
    const std::uint32_t tail = due->prev;
    N(tail)->next = first;
    N(first)->prev = tail;
    N(last)->next = kDue;
    due->prev = last;
    hd->prev = hd->next = head;
  }

  // Re-places the nodes of the slot being cascaded; false if moves_left ran out first.
  bool CascadePending(std::size_t& moves_left) {
    const int level = pending_level_;
    const int slot = CurrentSlot(level);
    const std::uint32_t head = HeadHandle(level, slot);
    // now_ is this slot's start, so every node re-placed here lands on a lower level or due.
    while (!Empty(head)) {
      if (moves_left == 0) return false;
      const std::uint32_t h = N(head)->next;
      TimerNode* n = N(h);
      // Nodes are scattered in memory: start loading the next one while this one moves.
      __builtin_prefetch(N(n->next));
      Unlink(n);
      Place(n, h);
      --moves_left;
    }
    occupied_[level] &= ~(std::uint64_t{1} << slot);
    pending_level_ = -1;
    return true;
  }

  // Returns one node whose deadline <= now_ms (unlinked), or nullptr when none is left or
  // moves_left ran out; advances the wheel's time as far as it can towards now_ms.
  TimerNode* PopExpired(std::int64_t now_ms, std::size_t& moves_left) {
    for (;;) {
      if (!Empty(kDue)) {
        TimerNode* n = N(N(kDue)->next);
        __builtin_prefetch(N(n->next));
        Unlink(n);
        --size_;
        return n;
      }
      if (pending_level_ >= 0) {
        if (!CascadePending(moves_left)) return nullptr;
        continue;
      }
      int level = 0;
      while (level < kLevels && occupied_[level] == 0) ++level;
      if (level == kLevels) {
        if (now_ms > now_) now_ = now_ms;
        return nullptr;
      }
      const int slot = std::countr_zero(occupied_[level]);
      const std::int64_t start = SlotStart(level, slot);
      if (start > now_ms) {
        // Nothing occupied starts before now_ms, so every placement stays valid at now_ms.
        if (now_ms > now_) now_ = now_ms;
        return nullptr;
      }
      now_ = start;
      if (level == 0) {
        // A level-0 slot holds exactly the nodes whose deadline is its start.
        SpliceIntoDue(HeadHandle(0, slot));
        occupied_[0] &= ~(std::uint64_t{1} << slot);
      } else {
        pending_level_ = level;
      }
    }
  }

  Space space_;
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
  // Heads of circular lists, self-linked when empty: slot (L, s) at L * kSlots + s, then the
  // due list (nodes already expired, waiting to be popped, FIFO).
  std::array<TimerNode, kHeadCount> heads_;
};

}  // namespace latch::store
