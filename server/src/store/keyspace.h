#pragma once
// The whole keyspace: a power-of-two number of shards, chosen by the top bits of the key's
// 64-bit hash. Ordering shards by those top bits makes (hash) a global order of the keys,
// which is what SCAN's cursor walks: a key present for a whole SCAN is returned at least
// once however the tables grow or shrink in between.
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "store/shard.h"

namespace latch::store {

// Bytes the malloc heap has handed out (mallinfo2; under ASan/TSan, whose allocator
// mallinfo2 does not see, the sanitizer's own count).
std::size_t HeapBytes();
// Bytes in use in the process: the malloc heap plus every shard's slab pages (INFO
// used_memory, the metrics' latch_used_memory_bytes).
std::size_t UsedMemoryBytes();

class Keyspace {
 public:
  // Shards get the global indices base .. base + shard_count - 1 (keyspace_set.h).
  Keyspace(int shard_count, std::int64_t now_ms, int base = 0);

  int shard_count() const { return static_cast<int>(shards_.size()); }
  int base() const { return base_; }
  Shard& shard(int i) { return *shards_[static_cast<std::size_t>(i)]; }
  int ShardIndex(std::uint64_t hash) const {
    return shift_ >= 64 ? 0 : static_cast<int>(hash >> shift_);
  }
  Shard& ShardFor(std::uint64_t hash) { return shard(ShardIndex(hash)); }

  // Sums over shards of their published counters; take no lock (approximate while writes
  // run, exact when none do).
  std::size_t TotalKeys() const;
  std::size_t TotalExpires() const;
  std::uint64_t TotalExpired() const;

 private:
  std::vector<std::unique_ptr<Shard>> shards_;
  unsigned shift_;
  int base_;
};

}  // namespace latch::store
