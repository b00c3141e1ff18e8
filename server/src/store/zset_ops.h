#pragma once
// The sorted-set family's Op layer: ZADD (NX/XX/GT/LT/CH/INCR) and ZINCRBY, ZREM,
// ZREMRANGEBYRANK/BYSCORE, ZPOPMIN/ZPOPMAX. Reads take the container with
// FindContainer<ZSetValue> (container_ops.h). kWrongType for a key of another type, nothing
// changed then; a set left empty deletes its key. The caller holds the key's shard lock.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "store/op_env.h"
#include "store/shard.h"
#include "store/zset_value.h"

namespace latch::store {

struct ZAddParams {
  enum Flags : unsigned { kNx = 1, kXx = 2, kGt = 4, kLt = 8, kIncr = 16 };
  unsigned flags = 0;
};

struct ZAddResult {
  std::int64_t added = 0;
  std::int64_t updated = 0;  // existing members whose score changed
  bool incr_done = false;    // INCR: the member was written (else the reply is nil)
  double incr_score = 0;     // ... and its new score
};

struct ScoredMember {
  double score;
  std::string_view member;
};

// kOk, kWrongType, kNotFloat (INCR made the score NaN: nothing written).
OpStatus OpZAdd(const KeyRef& k, std::span<const ScoredMember> elems, const ZAddParams& p,
                const OpEnv& env, ZAddResult* r);
OpStatus OpZRem(const KeyRef& k, std::span<const std::string_view> members, const OpEnv& env,
                std::int64_t* removed);
// Removes ranks [start, stop] (0-based, negative counts from the end, Redis's clamping).
OpStatus OpZRemRangeByRank(const KeyRef& k, std::int64_t start, std::int64_t stop,
                           const OpEnv& env, std::int64_t* removed);
OpStatus OpZRemRangeByScore(const KeyRef& k, const ScoreRange& range, const OpEnv& env,
                            std::int64_t* removed);
// Pops up to count members from the low end (or the high end with max).
OpStatus OpZPop(const KeyRef& k, std::int64_t count, bool max, const OpEnv& env,
                std::vector<std::pair<std::string, double>>* out);

// Turns a ZRANGE-style index pair into an ascending [start, stop] within size; false when
// the range is empty.
bool ClampRankRange(std::int64_t size, std::int64_t* start, std::int64_t* stop);

}  // namespace latch::store
