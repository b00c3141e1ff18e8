#pragma once
// What OBJECT ENCODING, OBJECT REFCOUNT and MEMORY USAGE report for an object, decided in the
// store so that each value family answers for its own layout: a new type (hashes, sorted
// sets) adds its case here ("listpack", "hashtable", "skiplist", ...).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "store/object.h"

namespace latch::store {

// Redis's name for the encoding Redis would give this value. Strings: "int" when the value
// is an integer that fits a long in at most 20 bytes, "embstr" up to 44 bytes, else "raw"
// (latchd keeps every string in its block; the name is what a Redis user expects to see).
std::string_view EncodingOf(const Object& o);
// Redis shares the integers 0..9999 (refcount INT_MAX); every other value has one owner.
std::int64_t RefcountOf(const Object& o);
// Bytes the key costs: its block (8-byte size classes) and its slot in the shard's index.
std::size_t MemoryUsageOf(const Object& o);

}  // namespace latch::store
