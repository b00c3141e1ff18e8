#pragma once
// Visiting the keys of one multi-key command (DEL, UNLINK, EXISTS, MGET of up to millions of
// keys) with the next keys' memory already on its way. With a million keys nearly every
// lookup misses the cache twice (the index slot, then the object whose key it compares), so
// a plain loop waits for memory on each key in turn; here key i+2d's slot and key i+d's
// object are prefetched while key i is handled, and those waits overlap.
//
// The caller holds the shards of all `keys` (the dispatcher does) and visits them in
// argument order, so replies and key events come out exactly as in a plain loop.
#include <cstddef>
#include <span>

#include "store/key_ref.h"
#include "store/shard.h"

namespace latch::store {

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

}  // namespace latch::store
