#include "commands/key_lock.h"

namespace latch {

MultiShardLock::MultiShardLock(store::Keyspace& ks, std::span<const std::string_view> keys) {
  refs_.reserve(keys.size());
  for (auto k : keys) refs_.push_back(Resolve(ks, k));
  if (store::ThisThreadHoldsAllShards()) return;
  for (auto& r : refs_) {
    if (!store::ThisThreadHolds(r.shard)) shards_.push_back(r.shard);
  }
  // Shard addresses are a fixed total order, as good as their index. Locks already held by
  // this thread (an enclosing MultiShardLock) are not taken again; the enclosing lock was
  // itself taken in order and covers the same command's keys.
  std::sort(shards_.begin(), shards_.end());
  shards_.erase(std::unique(shards_.begin(), shards_.end()), shards_.end());
  if (shards_.size() > kMaxTracked) {
    // Too many to track one by one: freeze the whole keyspace instead.
    shards_.clear();
    all_.emplace(ks);
    return;
  }
  for (auto* s : shards_) {
    s->mu().lock();
    store::NoteHeld(s);
  }
}

MultiShardLock::~MultiShardLock() {
  for (auto it = shards_.rbegin(); it != shards_.rend(); ++it) {
    store::NoteReleased(*it);
    (*it)->mu().unlock();
  }
}

// Ascending index order; MultiShardLock uses address order. Both are total orders, but they
// must agree: shards are allocated one by one, so sort the index order by address too.
AllShardsLock::AllShardsLock(store::Keyspace& ks) : ks_(ks), owner_(!store::ThisThreadHoldsAllShards()) {
  if (!owner_) return;
  std::vector<store::Shard*> all;
  for (int i = 0; i < ks.shard_count(); ++i) all.push_back(&ks.shard(i));
  std::sort(all.begin(), all.end());
  for (auto* s : all) s->mu().lock();
  store::SetThisThreadHoldsAllShards(true);
}

AllShardsLock::~AllShardsLock() {
  if (!owner_) return;
  store::SetThisThreadHoldsAllShards(false);
  for (int i = 0; i < ks_.shard_count(); ++i) ks_.shard(i).mu().unlock();
}

}  // namespace latch
