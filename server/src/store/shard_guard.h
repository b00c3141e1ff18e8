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

#include "store/shard.h"

namespace latch::store {

bool ThisThreadHolds(const Shard& s);
void NoteHeld(const Shard& s);      // after locking s
void NoteReleased(const Shard& s);  // before unlocking s

// Waits for s's lock and notes it held. With `give_up` (a client's command) the wait is
// in short slices and ends without the lock, returning false, once *give_up is set: a
// script past busy-reply-threshold holds every shard, and the client must be answered
// BUSY instead of waiting for it. Without `give_up` it waits as long as it takes (only
// for threads that serve no client).
bool LockShard(Shard& s, const std::atomic<bool>* give_up);
// The same wait for any other mutex a script holds for its whole run (the interpreter's).
bool LockTimed(std::timed_mutex& mu, const std::atomic<bool>* give_up);
void UnlockShard(Shard& s);

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
