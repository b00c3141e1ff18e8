#pragma once
// What the sorted-set command files share: the read lookup with its WRONGTYPE reply, and
// score-range parsing with Redis's error text.
#include <string_view>

#include "commands/context.h"
#include "commands/errors.h"
#include "store/container_ops.h"
#include "store/float_text.h"
#include "store/zset_value.h"

namespace latch {

inline constexpr std::string_view kMinMaxNotFloat = "ERR min or max is not a float";

// The key's sorted set for a read: false (WRONGTYPE replied) for another type; *z is null
// when the key is missing.
inline bool ReadZSet(CommandContext& ctx, const store::ZSetValue** z) {
  store::Object* o;
  store::ZSetValue* found;
  if (store::FindContainer(ctx.key(0), ctx.env(), &o, &found) != store::OpStatus::kOk) {
    ctx.out.Error(errors::kWrongType);
    return false;
  }
  *z = found;
  return true;
}

inline bool ParseScoreRange(std::string_view min, std::string_view max, store::ScoreRange* r) {
  return store::ParseRangeEnd(min, &r->min, &r->min_ex) &&
         store::ParseRangeEnd(max, &r->max, &r->max_ex);
}

}  // namespace latch
