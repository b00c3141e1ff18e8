// ZUNION, ZINTER, ZDIFF (WITHSCORES), ZUNIONSTORE, ZINTERSTORE, ZDIFFSTORE, ZINTERCARD, and
// ZMPOP (the non-blocking pop over numkeys keys):
// Redis 7.0's argument order and errors (numkeys, then the keys' types, then the options),
// reply shapes (RESP3 WITHSCORES: one [member, score] pair per element). Their keys follow
// numkeys, so the handler resolves and locks them itself (kCmdOwnKeyLocks); the combining
// is store/zset_setop.h.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "commands/arg_parse.h"
#include "commands/command_table.h"
#include "commands/errors.h"
#include "commands/key_lock.h"
#include "store/container_ops.h"
#include "store/float_text.h"
#include "store/zset_ops.h"
#include "store/zset_setop.h"

namespace latch {
namespace {

using store::Aggregate;
using store::SetOp;
using store::SetOpSource;

struct SetOpCommand {
  SetOp op;
  bool store;  // *STORE: the destination is argument 1, numkeys argument 2
  bool card;   // ZINTERCARD
};

struct SetOpArgs {
  std::vector<SetOpSource> sources;
  Aggregate agg = Aggregate::kSum;
  bool withscores = false;
  std::int64_t limit = 0;
};

// numkeys and the number of arguments: replies the error and returns false.
bool ParseNumKeys(CommandContext& ctx, std::size_t index, std::int64_t* n) {
  if (!ParseInt64(ctx.arg(index), n)) {
    ctx.out.Error(errors::kNotInteger);
    return false;
  }
  if (*n < 1) {
    std::string name(ctx.arg(0));
    for (char& c : name) c = AsciiLower(c);
    ctx.out.Error("ERR at least 1 input key is needed for '" + name + "' command");
    return false;
  }
  if (*n > static_cast<std::int64_t>(ctx.argc() - index - 1)) {
    ctx.out.Error(errors::kSyntax);
    return false;
  }
  return true;
}

// The options after the keys, from argument j on. Replies the error and returns false.
bool ParseOptions(CommandContext& ctx, const SetOpCommand& cmd, std::size_t j, SetOpArgs* a) {
  const std::size_t n = a->sources.size();
  const bool weighted = cmd.op != SetOp::kDiff && !cmd.card;
  while (j < ctx.argc()) {
    const std::size_t remaining = ctx.argc() - j;
    if (weighted && remaining >= n + 1 && EqualsNoCase(ctx.arg(j), "weights")) {
      ++j;
      for (std::size_t i = 0; i < n; ++i, ++j) {
        if (!store::ParseDouble(ctx.arg(j), &a->sources[i].weight)) {
          ctx.out.Error("ERR weight value is not a float");
          return false;
        }
      }
    } else if (weighted && remaining >= 2 && EqualsNoCase(ctx.arg(j), "aggregate")) {
      switch (FoldWord(ctx.arg(j + 1))) {
        case Word("sum"):
          a->agg = Aggregate::kSum;
          break;
        case Word("min"):
          a->agg = Aggregate::kMin;
          break;
        case Word("max"):
          a->agg = Aggregate::kMax;
          break;
        default:
          ctx.out.Error(errors::kSyntax);
          return false;
      }
      j += 2;
    } else if (!cmd.store && !cmd.card && EqualsNoCase(ctx.arg(j), "withscores")) {
      a->withscores = true;
      ++j;
    } else if (cmd.card && remaining >= 2 && EqualsNoCase(ctx.arg(j), "limit")) {
      // Redis answers a non-integer limit with the same text.
      if (!ParseInt64(ctx.arg(j + 1), &a->limit) || a->limit < 0) {
        ctx.out.Error("ERR LIMIT can't be negative");
        return false;
      }
      j += 2;
    } else {
      ctx.out.Error(errors::kSyntax);
      return false;
    }
  }
  return true;
}

void ReplyMembers(CommandContext& ctx, const store::ZSetValue& z, bool withscores) {
  const bool pairs = withscores && ctx.session.proto >= 3;
  ctx.out.ArrayHeader(withscores && !pairs ? z.size() * 2 : z.size());
  for (const auto* n = z.First(); n != nullptr; n = n->next()) {
    if (pairs) ctx.out.ArrayHeader(2);
    ctx.out.Bulk(n->member());
    if (withscores) ctx.out.Double(n->score());
  }
}

void RunSetOp(CommandContext& ctx, const SetOpCommand& cmd) {
  const std::size_t numkeys_at = cmd.store ? 2 : 1;
  std::int64_t n = 0;
  if (!ParseNumKeys(ctx, numkeys_at, &n)) return;
  const std::size_t first = numkeys_at + 1;
  // The destination (if any) and the sources, locked together for the whole command.
  std::vector<std::string_view> names;
  if (cmd.store) names.push_back(ctx.arg(1));
  for (std::size_t i = 0; i < static_cast<std::size_t>(n); ++i) names.push_back(ctx.arg(first + i));
  KeyRefs refs;
  refs.Resolve(ctx.db(), names);
  ShardSet held;
  if (!held.Lock(ctx.db(), refs.refs(), GiveUpFlag(ctx))) return ctx.out.Error(errors::kBusyScript);
  const std::size_t src0 = cmd.store ? 1 : 0;
  SetOpArgs a;
  a.sources.resize(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < a.sources.size(); ++i) {
    store::Object* o;
    store::ZSetValue* z;
    if (store::FindContainer(refs.refs()[src0 + i], ctx.env(), &o, &z) != store::OpStatus::kOk) {
      return ctx.out.Error(errors::kWrongType);
    }
    a.sources[i].z = z;
  }
  if (!ParseOptions(ctx, cmd, first + a.sources.size(), &a)) return;
  if (cmd.card) {
    return ctx.out.Integer(static_cast<std::int64_t>(
        store::CountIntersection(a.sources, static_cast<std::size_t>(a.limit))));
  }
  auto result = store::CombineZSets(a.sources, cmd.op, a.agg);
  if (!cmd.store) return ReplyMembers(ctx, *result, a.withscores);
  const auto size = static_cast<std::int64_t>(result->size());
  store::OpZStore(refs.refs()[0], std::move(result), ctx.env());
  ctx.out.Integer(size);
}

void ZUnionCommand(CommandContext& ctx) { RunSetOp(ctx, {SetOp::kUnion, false, false}); }
void ZInterCommand(CommandContext& ctx) { RunSetOp(ctx, {SetOp::kInter, false, false}); }
void ZDiffCommand(CommandContext& ctx) { RunSetOp(ctx, {SetOp::kDiff, false, false}); }
void ZUnionStoreCommand(CommandContext& ctx) { RunSetOp(ctx, {SetOp::kUnion, true, false}); }
void ZInterStoreCommand(CommandContext& ctx) { RunSetOp(ctx, {SetOp::kInter, true, false}); }
void ZDiffStoreCommand(CommandContext& ctx) { RunSetOp(ctx, {SetOp::kDiff, true, false}); }
void ZInterCardCommand(CommandContext& ctx) { RunSetOp(ctx, {SetOp::kInter, false, true}); }

// ZMPOP numkeys key [key ...] MIN|MAX [COUNT count]: pops from the first of the keys that
// exists (WRONGTYPE if that one is not a sorted set); nil when none does.
void ZMPopCommand(CommandContext& ctx) {
  std::int64_t n = 0;
  if (!ParseInt64(ctx.arg(1), &n) || n < 1) {
    return ctx.out.Error("ERR numkeys should be greater than 0");
  }
  if (n > static_cast<std::int64_t>(ctx.argc()) - 3) return ctx.out.Error(errors::kSyntax);
  const std::size_t where = 2 + static_cast<std::size_t>(n);
  bool max = false;
  switch (FoldWord(ctx.arg(where))) {
    case Word("min"):
      break;
    case Word("max"):
      max = true;
      break;
    default:
      return ctx.out.Error(errors::kSyntax);
  }
  std::int64_t count = -1;
  for (std::size_t j = where + 1; j < ctx.argc(); ++j) {
    if (count != -1 || !EqualsNoCase(ctx.arg(j), "count") || j + 1 >= ctx.argc()) {
      return ctx.out.Error(errors::kSyntax);
    }
    if (!ParseInt64(ctx.arg(++j), &count) || count < 1) {
      return ctx.out.Error("ERR count should be greater than 0");
    }
  }
  if (count == -1) count = 1;
  KeyRefs refs;
  refs.Resolve(ctx.db(), ctx.args.subspan(2, static_cast<std::size_t>(n)));
  ShardSet held;
  if (!held.Lock(ctx.db(), refs.refs(), GiveUpFlag(ctx))) return ctx.out.Error(errors::kBusyScript);
  for (const KeyRef& k : refs.refs()) {
    store::Object* o;
    store::ZSetValue* z;
    if (store::FindContainer(k, ctx.env(), &o, &z) != store::OpStatus::kOk) {
      return ctx.out.Error(errors::kWrongType);
    }
    if (z == nullptr) continue;
    std::vector<std::pair<std::string, double>> popped;
    store::OpZPop(k, count, max, ctx.env(), &popped);
    ctx.out.ArrayHeader(2);
    ctx.out.Bulk(k.key);
    ctx.out.ArrayHeader(popped.size());
    for (const auto& [member, score] : popped) {
      ctx.out.ArrayHeader(2);
      ctx.out.Bulk(member);
      ctx.out.Double(score);
    }
    return;
  }
  ctx.out.NullArray();
}

// The STORE forms name their destination at 1 (ACL, COMMAND INFO); the sources follow
// numkeys, as EVAL's keys do.
void AddZSetStoreCommand(CommandTable& t, const char* name, int arity, std::uint32_t flags,
                         bool dest, CommandHandler handler, std::string_view summary,
                         std::string_view since) {
  t.Add({.name = name,
         .arity = arity,
         .flags = flags | kCmdOwnKeyLocks,
         .first_key = dest ? 1 : 0,
         .last_key = dest ? 1 : 0,
         .key_step = dest ? 1 : 0,
         .handler = handler,
         .group = "sorted-set",
         .summary = summary,
         .since = since});
}

}  // namespace

void RegisterZSetStoreCommands(CommandTable& t) {
  const auto w = kCmdWrite | kCmdDenyOom;
  AddZSetStoreCommand(t, "zunion", -3, kCmdReadonly, false, ZUnionCommand,
                      "Returns the union of multiple sorted sets.", "6.2.0");
  AddZSetStoreCommand(t, "zinter", -3, kCmdReadonly, false, ZInterCommand,
                      "Returns the intersect of multiple sorted sets.", "6.2.0");
  AddZSetStoreCommand(t, "zdiff", -3, kCmdReadonly, false, ZDiffCommand,
                      "Returns the difference between multiple sorted sets.", "6.2.0");
  AddZSetStoreCommand(t, "zintercard", -3, kCmdReadonly, false, ZInterCardCommand,
                      "Returns the number of members of the intersect of multiple sorted sets.",
                      "7.0.0");
  AddZSetStoreCommand(
      t, "zmpop", -4, kCmdWrite, false, ZMPopCommand,
      "Returns the highest- or lowest-scoring members from one or more sorted sets after "
      "removing them. Deletes the sorted set if the last member was popped.",
      "7.0.0");
  AddZSetStoreCommand(t, "zunionstore", -4, w, true, ZUnionStoreCommand,
                      "Stores the union of multiple sorted sets in a key.", "2.0.0");
  AddZSetStoreCommand(t, "zinterstore", -4, w, true, ZInterStoreCommand,
                      "Stores the intersect of multiple sorted sets in a key.", "2.0.0");
  AddZSetStoreCommand(t, "zdiffstore", -4, w, true, ZDiffStoreCommand,
                      "Stores the difference of multiple sorted sets in a key.", "6.2.0");
}

}  // namespace latch
