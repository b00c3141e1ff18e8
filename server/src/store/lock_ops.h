#pragma once
// The native locks' Op layer (LOCK.ACQUIRE / RELEASE / EXTEND): a lock is its string key
// (value = owner, deadline = TTL); a key granted here carries a fencing token. The caller
// holds the key's shard lock; `table` is the LockTable of that shard.
#include <cstdint>
#include <string_view>

#include "store/lock_table.h"
#include "store/op_env.h"

namespace latch::store {

// Takes the lock when the key is absent: creates it (value owner, TTL ttl_ms) and returns
// its fencing token. Returns 0 when the key exists, whoever holds it (the same owner
// included: a re-acquire is not a grant, as with SET NX), or when a queued waiter was
// handed the key first.
std::uint64_t OpAcquire(LockTable& table, const KeyRef& k, std::string_view owner,
                        std::int64_t ttl_ms, const TimeSnapshot& now);
// kOk released (the next waiter gets the key), kNotMet held by another owner, kNoKey.
OpStatus OpRelease(LockTable& table, const KeyRef& k, std::string_view owner,
                   const TimeSnapshot& now);
// kOk extended to now + ttl_ms, kNotMet held by another owner, kNoKey.
OpStatus OpExtend(LockTable& table, const KeyRef& k, std::string_view owner, std::int64_t ttl_ms,
                  const TimeSnapshot& now);

}  // namespace latch::store
