#pragma once
// Shard locks held by this thread, tracked by shard index (a table sized by the shard
// count, so any number of held shards is tracked), so that code which locks a shard runs
// unchanged inside a larger atomic unit that already holds it: the dispatcher holds a
// command's key shards, EXEC and scripts hold every shard (commands/key_lock.h).
//
// Lock order: shards in ascending index, then anything else (the watch registry's mutex,
// the script engine's interpreter mutex). Nobody takes a shard while holding a non-shard
// lock, and a thread holding shards only adds higher-indexed ones.
#include <atomic>
#include <cstddef>

#include "store/shard.h"

namespace latch::store {

// A replication log's view of one thread's lock phases (cluster/cluster_log.h, docs/CLUSTER.md
// "What a log entry is"): the records a thread appends under its shard locks form one unit,
// which takes its place in the log when the thread first releases a shard (it still holds
// every shard its records were written under) and is complete once the thread holds none, or
// takes a shard again. The log sets the thread's listener while a unit is open and clears it
// when the unit is complete; a single node never sets one (one thread-local load per lock).
class LockPhases {
 public:
  // Before this thread releases a shard; `last`: it then holds none.
  virtual void Releasing(bool last) = 0;
  // After this thread took a shard.
  virtual void Acquired() = 0;

 protected:
  ~LockPhases() = default;
};

namespace detail {
extern thread_local constinit LockPhases* t_lock_phases;
extern thread_local constinit int t_held_count;  // shards this thread holds
}  // namespace detail
inline void SetLockPhases(LockPhases* l) { detail::t_lock_phases = l; }
inline int ThisThreadHeldCount() { return detail::t_held_count; }

namespace detail {
// Indexed by shard index: the shard this thread holds at that index, or nullptr. The first
// kFixedHeld indexes (every default configuration) live in a plain array, checked inline on
// every command; higher ones in a vector grown once per thread (shard_guard.cpp).
inline constexpr std::size_t kFixedHeld = 64;
extern thread_local constinit const Shard* t_held[kFixedHeld];
bool ThisThreadHoldsHigh(const Shard& s);
void NoteHeldHigh(const Shard& s);
bool NoteReleasedHigh(const Shard& s);  // false: not held
bool LockShardContended(Shard& s, const std::atomic<bool>* give_up);
}  // namespace detail

inline bool ThisThreadHolds(const Shard& s) {
  const auto i = static_cast<std::size_t>(s.index());
  return i < detail::kFixedHeld ? detail::t_held[i] == &s : detail::ThisThreadHoldsHigh(s);
}
// After locking s.
inline void NoteHeld(const Shard& s) {
  const auto i = static_cast<std::size_t>(s.index());
  if (i < detail::kFixedHeld) {
    detail::t_held[i] = &s;
  } else {
    detail::NoteHeldHigh(s);
  }
  ++detail::t_held_count;
  if (detail::t_lock_phases != nullptr) [[unlikely]]
    detail::t_lock_phases->Acquired();
}
// Before unlocking s.
inline void NoteReleased(const Shard& s) {
  const auto i = static_cast<std::size_t>(s.index());
  const bool held = i >= detail::kFixedHeld ? detail::NoteReleasedHigh(s) : detail::t_held[i] == &s;
  if (!held) return;
  if (i < detail::kFixedHeld) detail::t_held[i] = nullptr;
  --detail::t_held_count;
  if (detail::t_lock_phases != nullptr) [[unlikely]] {
    detail::t_lock_phases->Releasing(detail::t_held_count == 0);
  }
}

// Waits for s's lock and notes it held. With `give_up` (a client's command) the wait is
// in short slices and ends without the lock, returning false, once *give_up is set: a
// script past busy-reply-threshold holds every shard, and the client must be answered
// BUSY instead of waiting for it. Without `give_up` it waits as long as it takes (only
// for threads that serve no client).
// Uncontended (nearly every command): one try_lock, inline.
inline bool LockShard(Shard& s, const std::atomic<bool>* give_up) {
  if (!s.mu().try_lock()) return detail::LockShardContended(s, give_up);
  NoteHeld(s);
  return true;
}
// One try_lock, noted held when taken (the worker tick's active expiry: a held shard is skipped).
inline bool TryLockShard(Shard& s) {
  if (!s.mu().try_lock()) return false;
  NoteHeld(s);
  return true;
}
// The same wait for any other mutex a script holds for its whole run (the interpreter's).
bool LockTimed(std::timed_mutex& mu, const std::atomic<bool>* give_up);
inline void UnlockShard(Shard& s) {
  NoteReleased(s);
  s.mu().unlock();
}

// Locks one shard unless this thread holds it already. Blocking: for tests and tools;
// command code goes through the dispatcher's key locks or ShardSet (commands/key_lock.h).
class ShardGuard {
 public:
  explicit ShardGuard(Shard& s) : shard_(ThisThreadHolds(s) ? nullptr : &s) {
    if (shard_) LockShard(*shard_, nullptr);
  }
  ~ShardGuard() {
    if (shard_) UnlockShard(*shard_);
  }
  ShardGuard(const ShardGuard&) = delete;
  ShardGuard& operator=(const ShardGuard&) = delete;

 private:
  Shard* shard_;
};

}  // namespace latch::store
