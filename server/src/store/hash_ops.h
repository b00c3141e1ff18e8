#pragma once
// The hash family's Op layer: HSET/HSETNX/HMSET, HDEL, HINCRBY, HINCRBYFLOAT. Reads take the
// container with FindContainer<HashValue> (container_ops.h). Every Op answers kWrongType for
// a key of another type and changes nothing then. The caller holds the key's shard lock.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "store/hash_value.h"
#include "store/op_env.h"
#include "store/shard.h"

namespace latch::store {

// Sets field/value pairs (pairs = f1 v1 f2 v2 ...), creating the key. *added: new fields.
// With nx, one field only, set only when absent (kNotMet otherwise).
OpStatus OpHSet(const KeyRef& k, std::span<const std::string_view> pairs, bool nx,
                const OpEnv& env, std::int64_t* added);
// Removes fields; a hash left empty deletes its key. *removed: fields that existed.
OpStatus OpHDel(const KeyRef& k, std::span<const std::string_view> fields, const OpEnv& env,
                std::int64_t* removed);
// kOk with *out, kNotInteger (the field's value), kOverflow.
OpStatus OpHIncrBy(const KeyRef& k, std::string_view field, std::int64_t delta, const OpEnv& env,
                   std::int64_t* out);
// kOk with *out (the new value as stored), kNotFloat (the field's value), kOverflow (the
// result is NaN or infinite).
OpStatus OpHIncrByFloat(const KeyRef& k, std::string_view field, long double delta,
                        const OpEnv& env, std::string* out);

}  // namespace latch::store
