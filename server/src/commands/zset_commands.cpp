// ZADD, ZINCRBY, ZREM, ZREMRANGEBYSCORE, ZREMRANGEBYRANK, ZPOPMIN, ZPOPMAX, ZCARD, ZSCORE,
// ZRANK, ZREVRANK, ZCOUNT: the sorted-set commands lock and semaphore libraries use, with
// Redis 7.0's replies and errors. The ranges (ZRANGE and friends) are zset_range_commands.cpp.
// The Cmd layer: parsing and replies; writes are store/zset_ops.h.
#include <string>
#include <vector>

#include "commands/arg_parse.h"
#include "commands/command_table.h"
#include "commands/errors.h"
#include "commands/key_lock.h"
#include "commands/zset_reply.h"
#include "store/container_ops.h"
#include "store/float_text.h"
#include "store/zset_ops.h"

namespace latch {
namespace {

using store::OpStatus;
using store::ZAddParams;
using store::ZSetValue;

// Parses ZADD's flags from argument 2 on; returns the index of the first score, or 0 after
// replying an error.
std::size_t ParseZAddFlags(CommandContext& ctx, ZAddParams* p, bool* ch) {
  std::size_t j = 2;
  for (; j < ctx.argc(); ++j) {
    switch (FoldWord(ctx.arg(j))) {
      case Word("nx"): p->flags |= ZAddParams::kNx; continue;
      case Word("xx"): p->flags |= ZAddParams::kXx; continue;
      case Word("gt"): p->flags |= ZAddParams::kGt; continue;
      case Word("lt"): p->flags |= ZAddParams::kLt; continue;
      case Word("ch"): *ch = true; continue;
      case Word("incr"): p->flags |= ZAddParams::kIncr; continue;
      default: break;
    }
    break;
  }
  const std::size_t elems = ctx.argc() - j;
  if (elems % 2 != 0 || elems == 0) {
    ctx.out.Error(errors::kSyntax);
    return 0;
  }
  const unsigned f = p->flags;
  if ((f & ZAddParams::kNx) && (f & ZAddParams::kXx)) {
    ctx.out.Error("ERR XX and NX options at the same time are not compatible");
    return 0;
  }
  if (((f & ZAddParams::kGt) && (f & ZAddParams::kNx)) ||
      ((f & ZAddParams::kLt) && (f & ZAddParams::kNx)) ||
      ((f & ZAddParams::kGt) && (f & ZAddParams::kLt))) {
    ctx.out.Error("ERR GT, LT, and/or NX options at the same time are not compatible");
    return 0;
  }
  if ((f & ZAddParams::kIncr) && elems > 2) {
    ctx.out.Error("ERR INCR option supports a single increment-element pair");
    return 0;
  }
  return j;
}

// Runs a parsed ZADD / ZINCRBY and replies: INCR answers the new score (nil when a flag
// skipped the member), otherwise the count of added (CH: and changed) members.
void RunZAdd(CommandContext& ctx, std::span<const store::ScoredMember> elems,
             const ZAddParams& p, bool ch) {
  store::ZAddResult r;
  switch (store::OpZAdd(ctx.key(0), elems, p, ctx.env(), &r)) {
    case OpStatus::kWrongType: return ctx.out.Error(errors::kWrongType);
    case OpStatus::kNotFloat: return ctx.out.Error("ERR resulting score is not a number (NaN)");
    default: break;
  }
  if (p.flags & ZAddParams::kIncr) {
    if (!r.incr_done) return ctx.out.Null();
    return ctx.out.Double(r.incr_score);
  }
  ctx.out.Integer(ch ? r.added + r.updated : r.added);
}

void ZAddCommand(CommandContext& ctx) {
  ZAddParams p;
  bool ch = false;
  const std::size_t first = ParseZAddFlags(ctx, &p, &ch);
  if (first == 0) return;
  // Every score is checked before anything is written.
  std::vector<store::ScoredMember> elems;
  elems.reserve((ctx.argc() - first) / 2);
  for (std::size_t j = first; j < ctx.argc(); j += 2) {
    double score;
    if (!store::ParseDouble(ctx.arg(j), &score)) return ctx.out.Error(errors::kNotFloat);
    elems.push_back({score, ctx.arg(j + 1)});
  }
  RunZAdd(ctx, elems, p, ch);
}

void ZIncrByCommand(CommandContext& ctx) {
  double delta;
  if (!store::ParseDouble(ctx.arg(2), &delta)) return ctx.out.Error(errors::kNotFloat);
  const store::ScoredMember elem{delta, ctx.arg(3)};
  RunZAdd(ctx, std::span(&elem, 1), ZAddParams{ZAddParams::kIncr}, false);
}

void ZRemCommand(CommandContext& ctx) {
  std::int64_t removed = 0;
  if (store::OpZRem(ctx.key(0), ctx.args.subspan(2), ctx.env(), &removed) ==
      OpStatus::kWrongType) {
    return ctx.out.Error(errors::kWrongType);
  }
  ctx.out.Integer(removed);
}

void ZRemRangeByScoreCommand(CommandContext& ctx) {
  store::ScoreRange range;
  if (!ParseScoreRange(ctx.arg(2), ctx.arg(3), &range)) return ctx.out.Error(kMinMaxNotFloat);
  std::int64_t removed = 0;
  if (store::OpZRemRangeByScore(ctx.key(0), range, ctx.env(), &removed) ==
      OpStatus::kWrongType) {
    return ctx.out.Error(errors::kWrongType);
  }
  ctx.out.Integer(removed);
}

void ZRemRangeByRankCommand(CommandContext& ctx) {
  std::int64_t start, stop;
  if (!ParseInt64(ctx.arg(2), &start) || !ParseInt64(ctx.arg(3), &stop)) {
    return ctx.out.Error(errors::kNotInteger);
  }
  std::int64_t removed = 0;
  if (store::OpZRemRangeByRank(ctx.key(0), start, stop, ctx.env(), &removed) ==
      OpStatus::kWrongType) {
    return ctx.out.Error(errors::kWrongType);
  }
  ctx.out.Integer(removed);
}

void ZPopGeneric(CommandContext& ctx, bool max) {
  if (ctx.argc() > 3) return ctx.out.Error(errors::kSyntax);
  std::int64_t count = 1;
  if (ctx.argc() == 3) {
    // Redis answers a non-integer with the range message too.
    if (!ParseInt64(ctx.arg(2), &count) || count < 0) {
      return ctx.out.Error("ERR value is out of range, must be positive");
    }
  }
  std::vector<std::pair<std::string, double>> popped;
  if (store::OpZPop(ctx.key(0), count, max, ctx.env(), &popped) == OpStatus::kWrongType) {
    return ctx.out.Error(errors::kWrongType);
  }
  // RESP3 with a count: one [member, score] pair per element, as ZRANGE WITHSCORES.
  const bool pairs = ctx.argc() == 3 && ctx.session.proto >= 3;
  ctx.out.ArrayHeader(pairs ? popped.size() : popped.size() * 2);
  for (const auto& [member, score] : popped) {
    if (pairs) ctx.out.ArrayHeader(2);
    ctx.out.Bulk(member);
    ctx.out.Double(score);
  }
}

void ZPopMinCommand(CommandContext& ctx) { ZPopGeneric(ctx, false); }
void ZPopMaxCommand(CommandContext& ctx) { ZPopGeneric(ctx, true); }

void ZCardCommand(CommandContext& ctx) {
  const ZSetValue* z;
  if (!ReadZSet(ctx, &z)) return;
  ctx.out.Integer(z != nullptr ? static_cast<std::int64_t>(z->size()) : 0);
}

void ZScoreCommand(CommandContext& ctx) {
  const ZSetValue* z;
  if (!ReadZSet(ctx, &z)) return;
  const ZSetValue::Node* n = z != nullptr ? z->Find(ctx.arg(2)) : nullptr;
  if (n == nullptr) return ctx.out.Null();
  ctx.out.Double(n->score());
}

void ZMScoreCommand(CommandContext& ctx) {
  const ZSetValue* z;
  if (!ReadZSet(ctx, &z)) return;
  ctx.out.ArrayHeader(ctx.argc() - 2);
  for (std::size_t i = 2; i < ctx.argc(); ++i) {
    const ZSetValue::Node* n = z != nullptr ? z->Find(ctx.arg(i)) : nullptr;
    if (n == nullptr) {
      ctx.out.Null();
    } else {
      ctx.out.Double(n->score());
    }
  }
}

void ZRankGeneric(CommandContext& ctx, bool rev) {
  const ZSetValue* z;
  if (!ReadZSet(ctx, &z)) return;
  const ZSetValue::Node* n = z != nullptr ? z->Find(ctx.arg(2)) : nullptr;
  if (n == nullptr) return ctx.out.Null();
  const std::size_t rank = z->RankOf(n);
  ctx.out.Integer(static_cast<std::int64_t>(rev ? z->size() - 1 - rank : rank));
}

void ZRankCommand(CommandContext& ctx) { ZRankGeneric(ctx, false); }
void ZRevRankCommand(CommandContext& ctx) { ZRankGeneric(ctx, true); }

void ZCountCommand(CommandContext& ctx) {
  store::ScoreRange range;
  if (!ParseScoreRange(ctx.arg(2), ctx.arg(3), &range)) return ctx.out.Error(kMinMaxNotFloat);
  const ZSetValue* z;
  if (!ReadZSet(ctx, &z)) return;
  const ZSetValue::Node* first = z != nullptr ? z->FirstIn(range) : nullptr;
  if (first == nullptr) return ctx.out.Integer(0);
  const ZSetValue::Node* last = z->LastIn(range);
  ctx.out.Integer(static_cast<std::int64_t>(z->RankOf(last) - z->RankOf(first) + 1));
}

void AddZSetCommand(CommandTable& t, const char* name, int arity, std::uint32_t flags,
                    CommandHandler handler, std::string_view summary, std::string_view since) {
  t.Add({.name = name, .arity = arity, .flags = flags, .first_key = 1, .last_key = 1,
         .key_step = 1, .handler = handler, .group = "sorted-set", .summary = summary,
         .since = since});
}

}  // namespace

void RegisterZSetCommands(CommandTable& t) {
  const auto w = kCmdWrite | kCmdDenyOom | kCmdFast;
  const auto r = kCmdReadonly | kCmdFast;
  AddZSetCommand(
      t, "zadd", -4, w, ZAddCommand,
      "Adds one or more members to a sorted set, or updates their scores. Creates the key if "
      "it doesn't exist.",
      "1.2.0");
  AddZSetCommand(t, "zincrby", 4, w, ZIncrByCommand,
                 "Increments the score of a member in a sorted set.", "1.2.0");
  AddZSetCommand(
      t, "zrem", -3, kCmdWrite | kCmdFast, ZRemCommand,
      "Removes one or more members from a sorted set. Deletes the sorted set if all members "
      "were removed.",
      "1.2.0");
  AddZSetCommand(
      t, "zremrangebyscore", 4, kCmdWrite, ZRemRangeByScoreCommand,
      "Removes members in a sorted set within a range of scores. Deletes the sorted set if all "
      "members were removed.",
      "1.2.0");
  AddZSetCommand(
      t, "zremrangebyrank", 4, kCmdWrite, ZRemRangeByRankCommand,
      "Removes members in a sorted set within a range of indexes. Deletes the sorted set if "
      "all members were removed.",
      "2.0.0");
  AddZSetCommand(
      t, "zpopmin", -2, kCmdWrite | kCmdFast, ZPopMinCommand,
      "Returns the lowest-scoring members from a sorted set after removing them. Deletes the "
      "sorted set if the last member was popped.",
      "5.0.0");
  AddZSetCommand(
      t, "zpopmax", -2, kCmdWrite | kCmdFast, ZPopMaxCommand,
      "Returns the highest-scoring members from a sorted set after removing them. Deletes the "
      "sorted set if the last member was popped.",
      "5.0.0");
  AddZSetCommand(t, "zcard", 2, r, ZCardCommand, "Returns the number of members in a sorted set.",
                 "1.2.0");
  AddZSetCommand(t, "zscore", 3, r, ZScoreCommand, "Returns the score of a member in a sorted set.",
                 "1.2.0");
  AddZSetCommand(t, "zmscore", -3, r, ZMScoreCommand,
                 "Returns the score of one or more members in a sorted set.", "6.2.0");
  AddZSetCommand(t, "zrank", 3, r, ZRankCommand,
                 "Returns the index of a member in a sorted set ordered by ascending scores.",
                 "2.0.0");
  AddZSetCommand(t, "zrevrank", 3, r, ZRevRankCommand,
                 "Returns the index of a member in a sorted set ordered by descending scores.",
                 "2.0.0");
  AddZSetCommand(t, "zcount", 4, r, ZCountCommand,
                 "Returns the count of members in a sorted set that have scores within a range.",
                 "2.0.0");
}

}  // namespace latch
