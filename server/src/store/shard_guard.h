#pragma once
// Locks one shard, unless this thread already holds every shard for an atomic unit (a
// script or MULTI/EXEC, see latch::AllShardsLock): then it is a no-op, so code that locks a
// shard runs unchanged inside such a unit.
#include "store/shard.h"

namespace latch::store {

// True on a thread that currently holds every shard's lock.
bool ThisThreadHoldsAllShards();
void SetThisThreadHoldsAllShards(bool v);

class ShardGuard {
 public:
  explicit ShardGuard(Shard& s) : shard_(ThisThreadHoldsAllShards() ? nullptr : &s) {
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
