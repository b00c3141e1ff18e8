// Compare-and-delete and value digests: Redis 8.4's DELEX and DIGEST, Valkey's DELIFEQ.
// Both deletes are store::OpDelIf (compare-and-delete), whose key event hands a lock to its
// queued waiter.
#include "commands/arg_parse.h"
#include "commands/command_table.h"
#include "commands/errors.h"
#include "commands/key_lock.h"
#include "store/key_ops.h"
#include "store/value_digest.h"

namespace latch {
namespace {

// Not among Redis 7's texts; Redis 8.4 answers an unknown DELEX condition with it.
constexpr std::string_view kInvalidCondition =
    "ERR Invalid condition. Use IFEQ, IFNE, IFDEQ, or IFDNE";

// DELEX key [IFEQ v | IFNE v | IFDEQ digest | IFDNE digest] -> 1 deleted, 0 not.
void DelExCommand(CommandContext& ctx) {
  if (ctx.argc() != 2 && ctx.argc() != 4) {
    return ctx.out.Error("ERR wrong number of arguments for 'delex' command");
  }
  ValueCond cond = ValueCond::kNone;
  std::string_view arg;
  if (ctx.argc() == 4) {
    std::string_view c = ctx.arg(2);
    cond = EqualsNoCase(c, "ifeq")    ? ValueCond::kIfEq
           : EqualsNoCase(c, "ifne")  ? ValueCond::kIfNe
           : EqualsNoCase(c, "ifdeq") ? ValueCond::kIfDeq
           : EqualsNoCase(c, "ifdne") ? ValueCond::kIfDne
                                      : ValueCond::kNone;
    if (cond == ValueCond::kNone) return ctx.out.Error(kInvalidCondition);
    arg = ctx.arg(3);
  }
  switch (store::OpDelIf(ctx.key(0), cond, arg, ctx.env())) {
    case store::OpStatus::kBadDigest: return ctx.out.Error(kDigestFormatError);
    case store::OpStatus::kWrongType: return ctx.out.Error(errors::kWrongType);
    case store::OpStatus::kOk: return ctx.out.Integer(1);
    default: return ctx.out.Integer(0);
  }
}

// DIGEST key -> 16 lowercase hex digits of XXH3-64(value), nil when the key is missing.
void DigestCommand(CommandContext& ctx) {
  const KeyRef& k = ctx.key(0);
  store::Object* o = k.shard->Find(k.key, k.hash, ctx.now.mono_ms);
  if (o == nullptr) return ctx.out.Null();
  if (o->is_container()) return ctx.out.Error(errors::kWrongType);
  ctx.out.Bulk(DigestHex(o->value()));
}

// DELIFEQ key value (Valkey 9) -> 1 deleted, 0 missing or another value.
void DelIfEqCommand(CommandContext& ctx) {
  const store::OpStatus status =
      store::OpDelIf(ctx.key(0), ValueCond::kIfEq, ctx.arg(2), ctx.env());
  if (status == store::OpStatus::kWrongType) return ctx.out.Error(errors::kWrongType);
  ctx.out.Integer(status == store::OpStatus::kOk ? 1 : 0);
}

}  // namespace

void RegisterCompareCommands(CommandTable& t) {
  t.Add({.name = "delex", .arity = -2, .flags = kCmdWrite | kCmdFast, .first_key = 1,
         .last_key = 1, .key_step = 1, .handler = DelExCommand, .group = "string",
         .summary = "Conditionally removes the specified key based on value or digest "
                    "comparison.",
         .since = "8.4.0"});
  t.Add({.name = "digest", .arity = 2, .flags = kCmdReadonly | kCmdFast, .first_key = 1,
         .last_key = 1, .key_step = 1, .handler = DigestCommand, .group = "string",
         .summary = "Returns the XXH3 hash of a string value.", .since = "8.4.0"});
  t.Add({.name = "delifeq", .arity = 3, .flags = kCmdWrite | kCmdFast, .first_key = 1,
         .last_key = 1, .key_step = 1, .handler = DelIfEqCommand, .group = "string",
         .summary = "Delete key if value matches string.", .since = "9.0.0"});
}

}  // namespace latch
