#pragma once
// SCAN's walk of a keyspace. Keys are visited in ascending *scan order*: the key's 64-bit
// hash with its bits rearranged (a bijection) the way the shards lay keys out: the shard's
// bits first (the hash's top bits, keyspace.h), then the 32 low bits by which a shard's
// index orders its slots (HandleTable::ScanFrom), then the remaining bits. A cursor is the
// scan order to resume at, 0 the start; so a key present for a whole scan is returned
// exactly once however the tables grow or move entries between calls, and a call costs
// what it returns and skips, never a shard's size (a full SCAN is linear in the keys).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "store/keyspace.h"

namespace latch::store {

struct ScanEntry {
  std::uint64_t order;  // the key's scan order
  std::uint64_t hash;
  std::string key;
};

// The scan order of the key hashed to `hash` in `ks`.
std::uint64_t ScanOrder(const Keyspace& ks, std::uint64_t hash);

// One shard's part of a SCAN call: appends the keys of shard i from `cursor` on (a cursor
// before the shard starts at its first key), in scan order, up to `want` of them and a few
// more when keys share one hash (those are never split between calls), visiting at most
// *empty_budget empty index slots (decremented). Returns the cursor to resume at: inside
// shard i, the start of shard i + 1 once shard i is done, 0 after the last shard. The
// caller holds shard i's lock; keys past their deadline are included (the caller's lookup
// filters them).
std::uint64_t ScanShard(Keyspace& ks, int i, std::uint64_t cursor, std::size_t want,
                        std::size_t* empty_budget, std::vector<ScanEntry>* out);

}  // namespace latch::store
