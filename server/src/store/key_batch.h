#pragma once
// Visiting the keys of one multi-key command (DEL, UNLINK, EXISTS, MGET of up to millions of
// keys) with the next keys' memory already on its way. With a million keys nearly every
// lookup misses the cache twice (the index slot, then the object whose key it compares), so
// a plain loop waits for memory on each key in turn; here key i+2d's slot and key i+d's
// object are prefetched while key i is handled, and those waits overlap.
//
// ForEachKeyPrefetched visits keys in the order given (MGET's replies follow the arguments);
// ShardBatches groups a command whose result does not depend on the order (DEL, EXISTS) by
// shard, so that each shard is locked once and can be released as soon as its keys are done.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "store/key_ref.h"
#include "store/keyspace.h"
#include "store/shard.h"

namespace latch::store {

// The caller holds the shards of all `keys`.
template <class Fn>
void ForEachKeyPrefetched(std::span<const KeyRef> keys, Fn&& fn) {
  constexpr std::size_t kAhead = 8;  // keys between an object's prefetch and its use
  const std::size_t n = keys.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (const std::size_t far = i + 2 * kAhead; far < n) {
      keys[far].shard->PrefetchSlot(keys[far].hash);
    }
    if (const std::size_t near = i + kAhead; near < n) {
      keys[near].shard->PrefetchObject(keys[near].hash);
    }
    fn(keys[i]);
  }
}

// A command's keys hashed once and grouped by shard: a stable counting sort of the key
// positions on the shard index, linear in the number of keys and taking no lock. Within a
// shard the keys keep their argument order, so a key named twice is met twice in its
// shard's run, in order. Kept small (12 bytes a key: the hash and a position; a KeyRef is
// made as each key is visited), since a million keys' fresh pages cost more than the sort.
class ShardBatches {
 public:
  // `keys` (views of the command's arguments) must outlive this object.
  ShardBatches(Keyspace& ks, std::span<const std::string_view> keys);

  int shard_count() const { return static_cast<int>(begin_.size()) - 1; }
  bool empty(int i) const { return Begin(i) == Begin(i + 1); }
  // Calls fn(const KeyRef&) for each key of shard i (held by the caller), in argument order,
  // with the next keys' memory prefetched. A shard's keys are scattered over the arguments,
  // so besides the index slot and the object (as ForEachKeyPrefetched), the key's hash and
  // view, then its bytes (which the object's key is compared with), are fetched ahead too.
  template <class Fn>
  void ForEach(int i, Fn&& fn) const {
    constexpr std::size_t kAhead = 8;
    Shard& shard = ks_.shard(i);
    const std::uint32_t* pos = order_.get() + Begin(i);
    const std::size_t n = Begin(i + 1) - Begin(i);
    for (std::size_t j = 0; j < n; ++j) {
      if (j + 3 * kAhead < n) {
        __builtin_prefetch(&hashes_[pos[j + 3 * kAhead]]);
        __builtin_prefetch(&keys_[pos[j + 3 * kAhead]]);
      }
      if (j + 2 * kAhead < n) {
        const std::uint32_t p = pos[j + 2 * kAhead];
        shard.PrefetchSlot(hashes_[p]);
        __builtin_prefetch(keys_[p].data());
      }
      if (j + kAhead < n) shard.PrefetchObject(hashes_[pos[j + kAhead]]);
      fn(KeyRef{keys_[pos[j]], hashes_[pos[j]], &shard});
    }
  }

 private:
  std::size_t Begin(int i) const { return begin_[static_cast<std::size_t>(i)]; }

  Keyspace& ks_;
  std::span<const std::string_view> keys_;
  std::vector<std::size_t> begin_;  // shard i's positions: order_[begin_[i], begin_[i + 1])
  // Written once each, no fill first.
  std::unique_ptr<std::uint64_t[]> hashes_;  // by argument position
  std::unique_ptr<std::uint32_t[]> order_;   // argument positions, shard by shard
};

}  // namespace latch::store
