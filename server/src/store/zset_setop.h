#pragma once
// ZUNION/ZINTER/ZDIFF and their STORE forms, ZINTERCARD: combining sorted sets, with Redis
// 7.0's rules (weights multiply scores, a NaN product or sum counts as 0, AGGREGATE
// SUM|MIN|MAX, a DIFF keeps the first set's scores). The caller holds every key's shard.
#include <cstddef>
#include <memory>
#include <span>

#include "store/op_env.h"
#include "store/shard.h"
#include "store/zset_value.h"

namespace latch::store {

enum class SetOp { kUnion, kInter, kDiff };
enum class Aggregate { kSum, kMin, kMax };

struct SetOpSource {
  const ZSetValue* z = nullptr;  // null: the key is missing (an empty set)
  double weight = 1;
};

// The combined set (possibly empty). Reorders `sources` (smallest first) for UNION/INTER.
std::unique_ptr<ZSetValue> CombineZSets(std::span<SetOpSource> sources, SetOp op, Aggregate agg);
// ZINTERCARD: how many members are in every source, counting stops at limit (0: none).
std::size_t CountIntersection(std::span<SetOpSource> sources, std::size_t limit);
// Writes `value` at k whatever k held (its TTL cleared), or deletes k when value is empty.
void OpZStore(const KeyRef& k, std::unique_ptr<ZSetValue> value, const OpEnv& env);

}  // namespace latch::store
