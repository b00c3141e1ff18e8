#include "store/timer_wheel.h"

#include <bit>
#include <cassert>
#include <functional>

namespace latch::store {
namespace {

// Maps int64 time onto uint64 preserving order, so that negative times and INT64_MAX need no
// special case. XOR of two keys equals XOR of the two times: only slot indices see the bias.
constexpr std::uint64_t kBias = std::uint64_t{1} << 63;
constexpr std::uint64_t Key(std::int64_t t) { return static_cast<std::uint64_t>(t) ^ kBias; }
constexpr std::int64_t FromKey(std::uint64_t k) { return static_cast<std::int64_t>(k ^ kBias); }

void SelfLink(TimerNode* head) { head->prev = head->next = head; }
bool Empty(const TimerNode& head) { return head.next == &head; }

void PushBack(TimerNode* head, TimerNode* n) {
  TimerNode* tail = head->prev;
  n->prev = tail;
  n->next = head;
  tail->next = n;
  head->prev = n;
}

void Unlink(TimerNode* n) {
  n->prev->next = n->next;
  n->next->prev = n->prev;
  n->prev = n->next = nullptr;
}

}  // namespace

TimerWheel::TimerWheel(std::int64_t now_ms, std::size_t cascade_limit)
    : now_(now_ms), cascade_limit_(cascade_limit == 0 ? 1 : cascade_limit) {
  for (TimerNode& h : heads_) SelfLink(&h);
  SelfLink(&due_);
}

void TimerWheel::Schedule(TimerNode* n, std::int64_t deadline_ms) {
  assert(!n->scheduled());
  n->deadline = deadline_ms;
  Place(n);
  ++size_;
}

void TimerWheel::Cancel(TimerNode* n) {
  if (!n->scheduled()) return;
  TimerNode* before = n->prev;
  TimerNode* after = n->next;
  Unlink(n);
  --size_;
  // A list left with one element holds only its sentinel: that slot became empty.
  if (before == after) ClearIfEmptyHead(before);
}

void TimerWheel::ClearIfEmptyHead(TimerNode* p) {
  const TimerNode* first = heads_.data();
  const TimerNode* last = first + heads_.size();
  if (std::less<const TimerNode*>{}(p, first) || !std::less<const TimerNode*>{}(p, last)) {
    return;  // due_ has no occupancy bit
  }
  const auto index = static_cast<int>(p - first);
  occupied_[index / kSlots] &= ~(std::uint64_t{1} << (index % kSlots));
}

void TimerWheel::Place(TimerNode* n) {
  if (n->deadline <= now_) {
    PushBack(&due_, n);
    return;
  }
  const std::uint64_t diff = Key(n->deadline) ^ Key(now_);
  const int level = (63 - std::countl_zero(diff)) / kSlotBits;
  const int slot = static_cast<int>((Key(n->deadline) >> (level * kSlotBits)) & (kSlots - 1));
  PushBack(&Head(level, slot), n);
  occupied_[level] |= std::uint64_t{1} << slot;
}

int TimerWheel::CurrentSlot(int level) const {
  return static_cast<int>((Key(now_) >> (level * kSlotBits)) & (kSlots - 1));
}

std::int64_t TimerWheel::SlotStart(int level, int slot) const {
  const int shift = level * kSlotBits;
  const int upper = shift + kSlotBits;
  const std::uint64_t high = upper >= 64 ? 0 : (Key(now_) >> upper) << upper;
  return FromKey(high | (static_cast<std::uint64_t>(slot) << shift));
}

void TimerWheel::SpliceIntoDue(TimerNode* head) {
  if (Empty(*head)) return;
  TimerNode* first = head->next;
  TimerNode* last = head->prev;
  TimerNode* tail = due_.prev;
  tail->next = first;
  first->prev = tail;
  last->next = &due_;
  due_.prev = last;
  SelfLink(head);
}

bool TimerWheel::CascadePending(std::size_t& moves_left) {
  const int level = pending_level_;
  const int slot = CurrentSlot(level);
  TimerNode* head = &Head(level, slot);
  // now_ is this slot's start, so every node re-placed here lands on a lower level or due_.
  while (!Empty(*head)) {
    if (moves_left == 0) return false;
    TimerNode* n = head->next;
    // Nodes are scattered in memory: start loading the one after next while this one moves.
    __builtin_prefetch(n->next->next);
    Unlink(n);
    Place(n);
    --moves_left;
  }
  occupied_[level] &= ~(std::uint64_t{1} << slot);
  pending_level_ = -1;
  return true;
}

TimerNode* TimerWheel::PopExpired(std::int64_t now_ms, std::size_t& moves_left) {
  for (;;) {
    if (!Empty(due_)) {
      TimerNode* n = due_.next;
      __builtin_prefetch(n->next->next);
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
      SpliceIntoDue(&Head(0, slot));
      occupied_[0] &= ~(std::uint64_t{1} << slot);
    } else {
      pending_level_ = level;
    }
  }
}

}  // namespace latch::store
