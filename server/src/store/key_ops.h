#pragma once
// Ops on any key whatever its type: delete, expire, persist, and the compare-and-delete /
// compare-and-expire pair that lock releases and extensions are made of (DELEX, DELIFEQ,
// the library lock scripts). The caller holds the key's shard lock.
#include <cstdint>
#include <string_view>

#include "store/op_env.h"
#include "store/shard.h"
#include "store/value_digest.h"

namespace latch::store {

// True when the key existed (and is now gone; a lock waiter may hold it anew).
bool OpDel(const KeyRef& k, const OpEnv& env);

struct ExpireParams {
  enum Flags : unsigned { kNx = 1, kXx = 2, kGt = 4, kLt = 8 };
  std::int64_t deadline_ms = 0;  // monotonic; <= now deletes the key (Redis's rule)
  unsigned flags = 0;
};
// kOk (deadline set, or the key deleted for a deadline already past), kNoKey, kNotMet.
OpStatus OpExpire(const KeyRef& k, const ExpireParams& p, const OpEnv& env);
// kOk removed the TTL; kNoKey; kNotMet when the key has no TTL.
OpStatus OpPersist(const KeyRef& k, const OpEnv& env);

// Compare-and-delete: deletes the key when its value meets `cond` against `arg` (kNone:
// always). kOk, kNoKey, kNotMet, kBadDigest. An IFEQ that finds another value is a release
// by a non-owner (counted in the lock stats).
OpStatus OpDelIf(const KeyRef& k, ValueCond cond, std::string_view arg, const OpEnv& env);
// Compare-and-expire: sets the deadline when the value equals `owner`. kOk, kNoKey, kNotMet.
OpStatus OpExpireIfOwner(const KeyRef& k, std::string_view owner, std::int64_t deadline_ms,
                         const OpEnv& env);

}  // namespace latch::store
