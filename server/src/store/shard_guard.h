#pragma once
// Shard locks held by this thread, so that code which locks a shard runs unchanged inside a
// larger atomic unit that already holds it:
// - AllShardsLock (scripts, MULTI/EXEC) holds every shard;
// - MultiShardLock holds the shards of one command's keys (also used by the dispatcher
//   around a write command while WATCH is in use).
// ShardGuard locks one shard unless this thread already holds it.
#include "store/shard.h"

namespace latch::store {

bool ThisThreadHoldsAllShards();
void SetThisThreadHoldsAllShards(bool v);
bool ThisThreadHolds(const Shard* s);
void NoteHeld(const Shard* s);    // after locking s
void NoteReleased(const Shard* s);  // before unlocking s

class ShardGuard {
 public:
  explicit ShardGuard(Shard& s) : shard_(ThisThreadHolds(&s) ? nullptr : &s) {
    if (shard_) shard_->mu().lock();
  }
  ~ShardGuard() {
    if (shard_) shard_->mu().unlock();
  }
  ShardGuard(const ShardGuard&) = delete;
  ShardGuard& operator=(const ShardGuard&) = delete;

 private:
  Shard* shard_;
};

}  // namespace latch::store
