#pragma once
// String writes that edit a value in place: APPEND and SETRANGE (Redis 7.0 semantics; the
// TTL stays). kWrongType for a key of another type. The caller holds the key's shard lock.
#include <cstdint>
#include <string>
#include <string_view>

#include "store/op_env.h"
#include "store/shard.h"

namespace latch::store {

// Appends to the value (a missing key is ""); *len: the new length. kOverflow when the
// result would pass max_len (proto-max-bulk-len).
OpStatus OpAppend(const KeyRef& k, std::string_view suffix, std::size_t max_len,
                  const OpEnv& env, std::int64_t* len);
// Overwrites from `offset` (zero-padding a shorter value); an empty `data` writes nothing
// and creates no key. *len: the length after. kOverflow past max_len.
OpStatus OpSetRange(const KeyRef& k, std::size_t offset, std::string_view data,
                    std::size_t max_len, const OpEnv& env, std::int64_t* len);

// INCRBYFLOAT: adds to the value read as a long double (a missing key is 0), keeping the
// TTL; *out is the new value as stored. kNotFloat (the value), kOverflow (NaN or infinite).
OpStatus OpIncrByFloat(const KeyRef& k, long double delta, const OpEnv& env, std::string* out);

}  // namespace latch::store
