#pragma once
// Shard locking for handlers.
//
// - ShardGuard locks one key's shard, unless this thread already holds every shard for an
//   atomic unit (a script or MULTI/EXEC, see AllShardsLock): then it is a no-op, so a
//   handler runs unchanged inside such a unit.
// - MultiShardLock locks the shards of several keys in ascending order (no deadlock between
//   two multi-key commands).
// - AllShardsLock takes every shard in ascending order: the whole keyspace is frozen for
//   the duration of a script or a transaction, which is Redis's atomicity.
#include <algorithm>
#include <cstdint>
#include <mutex>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "store/keyspace.h"
#include "store/shard_guard.h"

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

using store::ShardGuard;

class AllShardsLock {
 public:
  explicit AllShardsLock(store::Keyspace& ks);
  ~AllShardsLock();
  AllShardsLock(const AllShardsLock&) = delete;
  AllShardsLock& operator=(const AllShardsLock&) = delete;

 private:
  store::Keyspace& ks_;
  bool owner_;  // false when nested inside another AllShardsLock on this thread
};

class MultiShardLock {
 public:
  MultiShardLock(store::Keyspace& ks, std::span<const std::string_view> keys);
  ~MultiShardLock();
  MultiShardLock(const MultiShardLock&) = delete;
  MultiShardLock& operator=(const MultiShardLock&) = delete;
  const std::vector<KeyRef>& refs() const { return refs_; }

 private:
  std::vector<KeyRef> refs_;
  static constexpr std::size_t kMaxTracked = 64;
  std::vector<store::Shard*> shards_;  // locked by us (empty inside an AllShardsLock)
  std::optional<AllShardsLock> all_;   // when the keys span more than kMaxTracked shards
};


}  // namespace latch
