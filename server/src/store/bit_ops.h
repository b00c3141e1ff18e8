#pragma once
// SETBIT's write: one bit of a string value (bit 0 is the most significant bit of byte 0, as
// in Redis), growing the value with zero bytes as needed; the TTL stays. The caller holds
// the key's shard lock.
#include <cstdint>

#include "store/op_env.h"
#include "store/shard.h"

namespace latch::store {

// kOk with *old (the bit before), or kWrongType.
OpStatus OpSetBit(const KeyRef& k, std::uint64_t bit, bool on, const OpEnv& env, int* old);

}  // namespace latch::store
