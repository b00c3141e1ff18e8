// ZRANGE (BYSCORE, BYLEX, REV, LIMIT, WITHSCORES), ZRANGESTORE, ZRANGEBYSCORE,
// ZREVRANGEBYSCORE, ZREVRANGE, ZRANGEBYLEX, ZREVRANGEBYLEX, ZLEXCOUNT, ZREMRANGEBYLEX: Redis 7.0's option rules, errors and reply shapes (RESP3 WITHSCORES: one
// [member, score] pair per element).
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "commands/arg_parse.h"
#include "commands/command_table.h"
#include "commands/zset_reply.h"
#include "store/zset_ops.h"
#include "store/zset_setop.h"

namespace latch {
namespace {

using store::ZSetValue;
using Node = ZSetValue::Node;

enum class By { kAuto, kRank, kScore, kLex };

struct RangeArgs {
  By by = By::kAuto;
  bool rev = false;
  bool rev_allowed = true;  // ZRANGE takes REV; the older commands fix the direction
  bool withscores = false;
  std::int64_t offset = 0, limit = -1;
  bool has_limit = false;
  bool store = false;  // ZRANGESTORE dst src ...: the source key is argument 2, not 1
  std::size_t src() const { return store ? 2 : 1; }
};

// One end of a BYLEX range: "-" / "+" (the ends of the set), "[x" inclusive, "(x" exclusive.
struct LexEnd {
  enum Kind { kMinusInf, kPlusInf, kValue } kind = kValue;
  std::string_view value;
  bool ex = false;
};

bool ParseLexEnd(std::string_view s, LexEnd* e) {
  if (s.empty()) return false;
  if (s == "-") return e->kind = LexEnd::kMinusInf, true;
  if (s == "+") return e->kind = LexEnd::kPlusInf, true;
  if (s[0] != '(' && s[0] != '[') return false;
  e->ex = s[0] == '(';
  e->value = s.substr(1);
  return true;
}

// Compares a member with a range end: <0, 0, >0.
int CompareLex(std::string_view m, const LexEnd& e) {
  if (e.kind == LexEnd::kMinusInf) return 1;
  if (e.kind == LexEnd::kPlusInf) return -1;
  return m.compare(e.value);
}

// Parses the options after "key start stop". Replies the error and returns false.
bool ParseRangeOptions(CommandContext& ctx, RangeArgs* a) {
  for (std::size_t j = a->src() + 3; j < ctx.argc(); ++j) {
    const std::size_t left = ctx.argc() - j - 1;
    const std::uint64_t w = FoldWord(ctx.arg(j));
    if (!a->store && EqualsNoCase(ctx.arg(j), "withscores")) {
      a->withscores = true;
    } else if (w == Word("limit") && left >= 2) {
      if (!ParseInt64(ctx.arg(j + 1), &a->offset) || !ParseInt64(ctx.arg(j + 2), &a->limit)) {
        ctx.out.Error(errors::kNotInteger);
        return false;
      }
      a->has_limit = true;
      j += 2;
    } else if (a->rev_allowed && w == Word("rev")) {
      a->rev = true;
    } else if (a->by == By::kAuto && w == Word("bylex")) {
      a->by = By::kLex;
    } else if (a->by == By::kAuto && w == Word("byscore")) {
      a->by = By::kScore;
    } else {
      ctx.out.Error(errors::kSyntax);
      return false;
    }
  }
  if (a->by == By::kAuto) a->by = By::kRank;
  // Redis checks the limit count, not the option: LIMIT 0 -1 passes by rank.
  if (a->limit != -1 && a->by == By::kRank) {
    ctx.out.Error(
        "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX");
    return false;
  }
  if (a->withscores && a->by == By::kLex) {
    ctx.out.Error("ERR syntax error, WITHSCORES not supported in combination with BYLEX");
    return false;
  }
  return true;
}

// The range's members, or for ZRANGESTORE their count after storing them at the destination
// (an empty range deletes it).
void Reply(CommandContext& ctx, const RangeArgs& a, const std::vector<const Node*>& nodes) {
  if (a.store) {
    auto out = std::make_unique<ZSetValue>();
    for (const Node* n : nodes) out->Insert(n->member(), n->score());
    store::OpZStore(ctx.key(0), std::move(out), ctx.env());
    return ctx.out.Integer(static_cast<std::int64_t>(nodes.size()));
  }
  const bool withscores = a.withscores;
  const bool pairs = withscores && ctx.session.proto >= 3;
  ctx.out.ArrayHeader(withscores && !pairs ? nodes.size() * 2 : nodes.size());
  for (const Node* n : nodes) {
    if (pairs) ctx.out.ArrayHeader(2);
    ctx.out.Bulk(n->member());
    if (withscores) ctx.out.Double(n->score());
  }
}

void ByRank(const ZSetValue& z, std::int64_t start, std::int64_t stop, bool rev,
            std::vector<const Node*>* out) {
  if (!store::ClampRankRange(static_cast<std::int64_t>(z.size()), &start, &stop)) return;
  const auto size = static_cast<std::int64_t>(z.size());
  const Node* n = z.AtRank(static_cast<std::size_t>(rev ? size - 1 - start : start));
  for (std::int64_t i = start; i <= stop && n != nullptr; ++i) {
    out->push_back(n);
    n = rev ? n->prev() : n->next();
  }
}

// Walks from `n` in the range's direction: skips `offset`, then takes up to `limit` (negative:
// all) while `in` holds. A negative offset takes nothing, as in Redis.
template <class In>
void Walk(const Node* n, const RangeArgs& a, In in, std::vector<const Node*>* out) {
  if (a.offset < 0) return;
  for (std::int64_t skip = a.offset; n != nullptr && skip > 0; --skip) {
    n = a.rev ? n->prev() : n->next();
  }
  for (std::int64_t left = a.limit; n != nullptr && left != 0 && in(n); --left) {
    out->push_back(n);
    n = a.rev ? n->prev() : n->next();
  }
}

// The whole of ZRANGE and its older forms; `first` is the index of the key (1).
void RangeGeneric(CommandContext& ctx, RangeArgs a) {
  if (!ParseRangeOptions(ctx, &a)) return;
  std::string_view lo = ctx.arg(a.src() + 1), hi = ctx.arg(a.src() + 2);
  if (a.rev && a.by != By::kRank) std::swap(lo, hi);
  std::int64_t start = 0, stop = 0;
  store::ScoreRange range;
  LexEnd lmin, lmax;
  if (a.by == By::kRank && (!ParseInt64(lo, &start) || !ParseInt64(hi, &stop))) {
    return ctx.out.Error(errors::kNotInteger);
  }
  if (a.by == By::kScore && !ParseScoreRange(lo, hi, &range)) {
    return ctx.out.Error(kMinMaxNotFloat);
  }
  if (a.by == By::kLex && (!ParseLexEnd(lo, &lmin) || !ParseLexEnd(hi, &lmax))) {
    return ctx.out.Error("ERR min or max not valid string range item");
  }
  store::Object* o;
  ZSetValue* z;
  if (store::FindContainer(ctx.key(a.store ? 1 : 0), ctx.env(), &o, &z) != store::OpStatus::kOk) {
    return ctx.out.Error(errors::kWrongType);
  }
  std::vector<const Node*> nodes;
  if (z == nullptr) return Reply(ctx, a, nodes);
  if (a.by == By::kRank) {
    ByRank(*z, start, stop, a.rev, &nodes);
  } else if (a.by == By::kScore) {
    if (a.offset > 0 && static_cast<std::size_t>(a.offset) >= z->size()) {
      return Reply(ctx, a, nodes);
    }
    const Node* n = a.rev ? z->LastIn(range) : z->FirstIn(range);
    Walk(n, a, [&](const Node* x) {
      return a.rev ? range.AboveMin(x->score()) : range.BelowMax(x->score());
    }, &nodes);
  } else {
    // Lexicographic ranges assume equal scores (Redis's contract): a linear walk from the
    // range's first member.
    auto above = [&](const Node* x) {
      const int c = CompareLex(x->member(), lmin);
      return lmin.ex ? c > 0 : c >= 0;
    };
    auto below = [&](const Node* x) {
      const int c = CompareLex(x->member(), lmax);
      return lmax.ex ? c < 0 : c <= 0;
    };
    const Node* n = a.rev ? z->Last() : z->First();
    while (n != nullptr && !(a.rev ? below(n) : above(n))) n = a.rev ? n->prev() : n->next();
    Walk(n, a, [&](const Node* x) { return a.rev ? above(x) : below(x); }, &nodes);
  }
  Reply(ctx, a, nodes);
}

void ZRangeCommand(CommandContext& ctx) { RangeGeneric(ctx, RangeArgs{}); }
void ZRangeStoreCommand(CommandContext& ctx) { RangeGeneric(ctx, RangeArgs{.store = true}); }

void ZRangeByLexCommand(CommandContext& ctx) {
  RangeGeneric(ctx, RangeArgs{.by = By::kLex, .rev = false, .rev_allowed = false});
}

void ZRevRangeByLexCommand(CommandContext& ctx) {
  RangeGeneric(ctx, RangeArgs{.by = By::kLex, .rev = true, .rev_allowed = false});
}

void ZLexCountCommand(CommandContext& ctx) {
  LexEnd lmin, lmax;
  if (!ParseLexEnd(ctx.arg(2), &lmin) || !ParseLexEnd(ctx.arg(3), &lmax)) {
    return ctx.out.Error("ERR min or max not valid string range item");
  }
  const ZSetValue* z;
  if (!ReadZSet(ctx, &z)) return;
  std::int64_t n = 0;
  for (const Node* x = z != nullptr ? z->First() : nullptr; x != nullptr; x = x->next()) {
    const int lo = CompareLex(x->member(), lmin), hi = CompareLex(x->member(), lmax);
    if ((lmin.ex ? lo > 0 : lo >= 0) && (lmax.ex ? hi < 0 : hi <= 0)) ++n;
  }
  ctx.out.Integer(n);
}

// ZREMRANGEBYLEX: the members in the range (equal scores assumed, as ZRANGEBYLEX), removed
// through ZREM's Op (one key event).
void ZRemRangeByLexCommand(CommandContext& ctx) {
  LexEnd lmin, lmax;
  if (!ParseLexEnd(ctx.arg(2), &lmin) || !ParseLexEnd(ctx.arg(3), &lmax)) {
    return ctx.out.Error("ERR min or max not valid string range item");
  }
  const ZSetValue* z;
  if (!ReadZSet(ctx, &z)) return;
  std::vector<std::string> members;
  for (const Node* x = z != nullptr ? z->First() : nullptr; x != nullptr; x = x->next()) {
    const int lo = CompareLex(x->member(), lmin), hi = CompareLex(x->member(), lmax);
    if ((lmin.ex ? lo > 0 : lo >= 0) && (lmax.ex ? hi < 0 : hi <= 0)) members.emplace_back(x->member());
  }
  const std::vector<std::string_view> views(members.begin(), members.end());
  std::int64_t removed = 0;
  if (!views.empty()) store::OpZRem(ctx.key(0), views, ctx.env(), &removed);
  ctx.out.Integer(removed);
}

void ZRevRangeCommand(CommandContext& ctx) {
  RangeGeneric(ctx, RangeArgs{.by = By::kRank, .rev = true, .rev_allowed = false});
}

void ZRangeByScoreCommand(CommandContext& ctx) {
  RangeGeneric(ctx, RangeArgs{.by = By::kScore, .rev = false, .rev_allowed = false});
}

void ZRevRangeByScoreCommand(CommandContext& ctx) {
  RangeGeneric(ctx, RangeArgs{.by = By::kScore, .rev = true, .rev_allowed = false});
}

void AddZSetRangeCommand(CommandTable& t, const char* name, int arity, CommandHandler handler,
                         std::string_view summary, std::string_view since) {
  t.Add({.name = name, .arity = arity, .flags = kCmdReadonly, .first_key = 1, .last_key = 1,
         .key_step = 1, .handler = handler, .group = "sorted-set", .summary = summary,
         .since = since});
}

}  // namespace

void RegisterZSetRangeCommands(CommandTable& t) {
  AddZSetRangeCommand(t, "zrange", -4, ZRangeCommand,
                      "Returns members in a sorted set within a range of indexes.", "1.2.0");
  t.Add({.name = "zrangestore", .arity = -5, .flags = kCmdWrite | kCmdDenyOom, .first_key = 1,
         .last_key = 2, .key_step = 1, .handler = ZRangeStoreCommand, .group = "sorted-set",
         .summary = "Stores a range of members from sorted set in a key.", .since = "6.2.0"});
  t.Add({.name = "zremrangebylex", .arity = 4, .flags = kCmdWrite, .first_key = 1,
         .last_key = 1, .key_step = 1, .handler = ZRemRangeByLexCommand, .group = "sorted-set",
         .summary = "Removes members in a sorted set within a lexicographical range. Deletes the "
                    "sorted set if all members were removed.",
         .since = "2.8.9"});
  AddZSetRangeCommand(t, "zrevrange", -4, ZRevRangeCommand,
                      "Returns members in a sorted set within a range of indexes in reverse order.",
                      "1.2.0");
  AddZSetRangeCommand(t, "zrangebyscore", -4, ZRangeByScoreCommand,
                      "Returns members in a sorted set within a range of scores.", "1.0.5");
  AddZSetRangeCommand(t, "zrangebylex", -4, ZRangeByLexCommand,
                      "Returns members in a sorted set within a lexicographical range.", "2.8.9");
  AddZSetRangeCommand(
      t, "zrevrangebylex", -4, ZRevRangeByLexCommand,
      "Returns members in a sorted set within a lexicographical range in reverse order.", "2.8.9");
  AddZSetRangeCommand(
      t, "zlexcount", 4, ZLexCountCommand,
      "Returns the number of members in a sorted set within a lexicographical range.", "2.8.9");
  AddZSetRangeCommand(t, "zrevrangebyscore", -4, ZRevRangeByScoreCommand,
                      "Returns members in a sorted set within a range of scores in reverse order.",
                      "2.2.0");
}

}  // namespace latch
