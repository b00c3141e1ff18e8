#pragma once
// Locking helpers for handlers: one key's shard, or the shards of several keys taken in
// ascending shard order (so two multi-key commands can never deadlock).
#include <algorithm>
#include <cstdint>
#include <mutex>
#include <span>
#include <string_view>
#include <vector>

#include "store/keyspace.h"

namespace latch {

struct KeyRef {
  std::string_view key;
  std::uint64_t hash;
  store::Shard* shard;
};

inline KeyRef Resolve(store::Keyspace& ks, std::string_view key) {
  std::uint64_t h = store::HashKey(key);
  return KeyRef{key, h, &ks.ShardFor(h)};
}

class MultiShardLock {
 public:
  MultiShardLock(store::Keyspace& ks, std::span<const std::string_view> keys) {
    refs_.reserve(keys.size());
    for (auto k : keys) refs_.push_back(Resolve(ks, k));
    for (auto& r : refs_) shards_.push_back(r.shard);
    std::sort(shards_.begin(), shards_.end());
    shards_.erase(std::unique(shards_.begin(), shards_.end()), shards_.end());
    // Pointer order of the shards is a fixed total order, like their index.
    for (auto* s : shards_) s->mu().lock();
  }
  ~MultiShardLock() {
    for (auto it = shards_.rbegin(); it != shards_.rend(); ++it) (*it)->mu().unlock();
  }
  MultiShardLock(const MultiShardLock&) = delete;
  MultiShardLock& operator=(const MultiShardLock&) = delete;
  const std::vector<KeyRef>& refs() const { return refs_; }

 private:
  std::vector<KeyRef> refs_;
  std::vector<store::Shard*> shards_;
};

}  // namespace latch
