#pragma once
// The string family's Op layer: SET (every flag), INCRBY, GETDEL. The caller holds the
// key's shard lock.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "store/op_env.h"
#include "store/shard.h"
#include "store/value_digest.h"

namespace latch::store {

struct SetParams {
  enum class Cond : std::uint8_t { kNone, kNx, kXx, kValue };
  Cond cond = Cond::kNone;
  ValueCond value_cond = ValueCond::kNone;  // for kValue: IFEQ/IFNE/IFDEQ/IFDNE
  std::string_view cond_arg;                // ... and the value or digest it compares with
  bool get = false;                         // report the old value (SET ... GET)
  Expiry expiry = Expiry::Clear();          // KEEPTTL: Keep(); EX/PX/EXAT/PXAT: At(deadline)
};

struct SetResult {
  bool had_old = false;  // with params.get: the key existed
  std::string old;       // ... and its value before the write
};

// kOk written; kNotMet skipped (NX on a live key, XX or IFEQ on a missing one, a value
// condition not met); kBadDigest (nothing written). `result` may be null without `get`.
// A SET NX with a TTL is the Redis lock idiom: it counts as a grant or a contended acquire.
OpStatus OpSet(const KeyRef& k, std::string_view value, const SetParams& p, const OpEnv& env,
               SetResult* result);

// MSET (nx false) and MSETNX (nx true): every key of `keys` gets the value that follows it in
// `key_value_pairs` (key, value, key, value, ...), dropping any TTL, as SET does. With nx,
// nothing is written when any key exists or lock-restart-delay is running. True when written.
bool OpMSet(std::span<const KeyRef> keys, std::span<const std::string_view> key_value_pairs,
            bool nx, const OpEnv& env);

// Adds delta to the integer value (a missing key is 0), keeping the TTL. kOk with *out set,
// kNotInteger or kOverflow.
OpStatus OpIncrBy(const KeyRef& k, std::int64_t delta, const OpEnv& env, std::int64_t* out);

// Deletes the key and hands back its value: true when it existed.
bool OpGetDel(const KeyRef& k, const OpEnv& env, std::string* value);

}  // namespace latch::store
