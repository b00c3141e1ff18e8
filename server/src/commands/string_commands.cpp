// SET (with Redis 8.4's IFEQ/IFNE/IFDEQ/IFDNE), SETNX, GET, GETDEL, MGET, INCR/INCRBY/DECR/DECRBY: Redis 7 string semantics.
// The Cmd layer only: options are parsed here, the meaning of each write is store/string_ops.h.
#include <climits>
#include <string>

#include "commands/arg_parse.h"
#include "commands/command_table.h"
#include "commands/errors.h"
#include "commands/expiry_arg.h"
#include "commands/key_lock.h"
#include "store/key_batch.h"
#include "store/string_ops.h"

namespace latch {
namespace {

enum SetFlags : unsigned {
  kNx = 1, kXx = 2, kGet = 4, kKeepTtl = 8, kEx = 16, kPx = 32, kExAt = 64, kPxAt = 128,
  kIfCond = 256,  // one of Redis 8.4's IFEQ / IFNE / IFDEQ / IFDNE
};
constexpr unsigned kAnyExpire = kEx | kPx | kExAt | kPxAt;

// IFEQ/IFNE/IFDEQ/IFDNE, or kNone for any other word.
ValueCond ParseValueCond(std::uint64_t word) {
  switch (word) {
    case Word("ifeq"): return ValueCond::kIfEq;
    case Word("ifne"): return ValueCond::kIfNe;
    case Word("ifdeq"): return ValueCond::kIfDeq;
    case Word("ifdne"): return ValueCond::kIfDne;
    default: return ValueCond::kNone;
  }
}

// Turns SET's expire option into the params' expiry. Replies the error on failure.
bool ParseSetExpiry(CommandContext& ctx, unsigned f, std::string_view arg, store::SetParams* p) {
  if (f & kKeepTtl) p->expiry = store::Expiry::Keep();
  if (!(f & kAnyExpire)) return true;
  const ExpiryForm form{.seconds = (f & (kEx | kExAt)) != 0,
                        .absolute = (f & (kExAt | kPxAt)) != 0,
                        .positive_only = true};
  std::int64_t deadline = 0;
  switch (ParseExpiry(arg, form, ctx.now, &deadline)) {
    case ExpiryStatus::kOk:
      p->expiry = store::Expiry::At(deadline);
      return true;
    case ExpiryStatus::kNotInteger:
      ctx.out.Error(errors::kNotInteger);
      return false;
    case ExpiryStatus::kInvalid:
      ctx.out.Error("ERR invalid expire time in 'set' command");
      return false;
  }
  return false;
}

// Parses SET's options (Redis's parseExtendedStringArgumentsOrReply rules: any order,
// case-insensitive, a repeated expire option of the same kind is allowed and the last wins).
// Redis 8.4's conditions IFEQ/IFNE/IFDEQ/IFDNE take one argument and exclude each other and
// NX/XX (a second condition is a syntax error; NX NX stays allowed as in Redis 7).
// Replies the error and returns false on failure.
bool ParseSetArgs(CommandContext& ctx, store::SetParams* p) {
  unsigned f = 0;
  std::string_view expire_arg;
  for (std::size_t j = 3; j < ctx.argc(); ++j) {
    const std::uint64_t word = FoldWord(ctx.arg(j));
    const bool has_next = j + 1 < ctx.argc();
    unsigned expire = 0;  // the expire option this word names, if any
    bool ok = false;
    switch (word) {
      case Word("nx"): ok = !(f & (kXx | kIfCond)); if (ok) f |= kNx; break;
      case Word("xx"): ok = !(f & (kNx | kIfCond)); if (ok) f |= kXx; break;
      case Word("get"): ok = true; f |= kGet; break;
      case Word("keepttl"): ok = !(f & kAnyExpire); if (ok) f |= kKeepTtl; break;
      case Word("ex"): expire = kEx; break;
      case Word("px"): expire = kPx; break;
      case Word("exat"): expire = kExAt; break;
      case Word("pxat"): expire = kPxAt; break;
      default:
        if (ValueCond cond = ParseValueCond(word);
            cond != ValueCond::kNone && has_next && !(f & (kNx | kXx | kIfCond))) {
          ok = true;
          f |= kIfCond;
          p->value_cond = cond;
          p->cond_arg = ctx.arg(++j);
        }
        break;
    }
    // The same expire option may repeat (the last wins); two different ones may not.
    if (expire != 0 && has_next && !(f & kKeepTtl) && !(f & (kAnyExpire & ~expire))) {
      ok = true;
      f |= expire;
      expire_arg = ctx.arg(++j);
    }
    if (!ok) {
      ctx.out.Error(errors::kSyntax);
      return false;
    }
  }
  using Cond = store::SetParams::Cond;
  p->cond = (f & kNx) ? Cond::kNx : (f & kXx) ? Cond::kXx : (f & kIfCond) ? Cond::kValue
                                                                          : Cond::kNone;
  p->get = (f & kGet) != 0;
  return ParseSetExpiry(ctx, f, expire_arg, p);
}

void SetCommand(CommandContext& ctx) {
  store::SetParams p;
  if (!ParseSetArgs(ctx, &p)) return;
  store::SetResult r;
  const store::OpStatus status = store::OpSet(ctx.key(0), ctx.arg(2), p, ctx.env(), &r);
  if (status == store::OpStatus::kBadDigest) return ctx.out.Error(kDigestFormatError);
  if (status == store::OpStatus::kWrongType) return ctx.out.Error(errors::kWrongType);
  // With GET the old value is the reply whether or not the value was set.
  if (p.get) {
    if (r.had_old) {
      ctx.out.Bulk(r.old);
    } else {
      ctx.out.Null();
    }
  } else if (status == store::OpStatus::kOk) {
    ctx.out.Ok();
  } else {
    ctx.out.Null();
  }
}

void SetNxCommand(CommandContext& ctx) {
  store::SetParams p;
  p.cond = store::SetParams::Cond::kNx;
  const bool set = store::OpSet(ctx.key(0), ctx.arg(2), p, ctx.env(), nullptr) ==
                   store::OpStatus::kOk;
  ctx.out.Integer(set ? 1 : 0);
}

void CountHit(CommandContext& ctx, bool hit) {
  (hit ? ctx.server.stats.keyspace_hits : ctx.server.stats.keyspace_misses)
      .fetch_add(1, std::memory_order_relaxed);
}

// GET's reply for a looked-up key (nil when missing), counted as a hit or a miss. A key of
// another type is WRONGTYPE for GET, nil within MGET (Redis's rules).
void ReplyValue(CommandContext& ctx, const KeyRef& k, bool wrongtype_is_nil = false) {
  const store::Object* o = k.shard->Find(k.key, k.hash, ctx.now.mono_ms);
  CountHit(ctx, o != nullptr);
  if (o != nullptr && o->is_container()) {
    if (wrongtype_is_nil) return ctx.out.Null();
    return ctx.out.Error(errors::kWrongType);
  }
  if (o == nullptr) {
    ctx.out.Null();
  } else {
    ctx.out.Bulk(o->value());
  }
}

void GetCommand(CommandContext& ctx) { ReplyValue(ctx, ctx.key(0)); }

void GetDelCommand(CommandContext& ctx) {
  const KeyRef& k = ctx.key(0);
  if (const store::Object* o = k.shard->Find(k.key, k.hash, ctx.now.mono_ms);
      o != nullptr && o->is_container()) {
    return ctx.out.Error(errors::kWrongType);
  }
  std::string value;
  const bool found = store::OpGetDel(ctx.key(0), ctx.env(), &value);
  CountHit(ctx, found);
  if (found) {
    ctx.out.Bulk(value);
  } else {
    ctx.out.Null();
  }
}

void MGetCommand(CommandContext& ctx) {
  ctx.out.ArrayHeader(ctx.keys.size());
  store::ForEachKeyPrefetched(ctx.keys, [&](const KeyRef& k) { ReplyValue(ctx, k, true); });
}

// INCRBY and friends: the value must parse as int64; the TTL is kept.
void IncrBy(CommandContext& ctx, std::int64_t delta) {
  std::int64_t next = 0;
  switch (store::OpIncrBy(ctx.key(0), delta, ctx.env(), &next)) {
    case store::OpStatus::kNotInteger: return ctx.out.Error(errors::kNotInteger);
    case store::OpStatus::kOverflow: return ctx.out.Error(errors::kOverflow);
    case store::OpStatus::kWrongType: return ctx.out.Error(errors::kWrongType);
    default: return ctx.out.Integer(next);
  }
}

void IncrCommand(CommandContext& ctx) { IncrBy(ctx, 1); }
void DecrCommand(CommandContext& ctx) { IncrBy(ctx, -1); }

void IncrByCommand(CommandContext& ctx) {
  std::int64_t d;
  if (!ParseInt64(ctx.arg(2), &d)) return ctx.out.Error(errors::kNotInteger);
  IncrBy(ctx, d);
}

void DecrByCommand(CommandContext& ctx) {
  std::int64_t d;
  if (!ParseInt64(ctx.arg(2), &d)) return ctx.out.Error(errors::kNotInteger);
  if (d == LLONG_MIN) return ctx.out.Error(errors::kDecrOverflow);
  IncrBy(ctx, -d);
}

// MSET / MSETNX: every key is set under its shard's lock (held by the dispatcher for all
// of them at once).
bool MSetGeneric(CommandContext& ctx, bool nx) {
  return store::OpMSet(ctx.keys, ctx.args.subspan(1), nx, ctx.env());
}

void MSetCommand(CommandContext& ctx) {
  if (ctx.argc() % 2 == 0) {
    return ctx.out.Error("ERR wrong number of arguments for 'mset' command");
  }
  MSetGeneric(ctx, false);
  ctx.out.Ok();
}

void MSetNxCommand(CommandContext& ctx) {
  if (ctx.argc() % 2 == 0) {
    return ctx.out.Error("ERR wrong number of arguments for 'msetnx' command");
  }
  ctx.out.Integer(MSetGeneric(ctx, true) ? 1 : 0);
}

}  // namespace

void RegisterStringCommands(CommandTable& t) {
  t.Add({.name = "mset", .arity = -3, .flags = kCmdWrite | kCmdDenyOom, .first_key = 1,
         .last_key = -1, .key_step = 2, .handler = MSetCommand, .group = "string",
         .summary = "Atomically creates or modifies the string values of one or more keys.",
         .since = "1.0.1"});
  t.Add({.name = "msetnx", .arity = -3, .flags = kCmdWrite | kCmdDenyOom, .first_key = 1,
         .last_key = -1, .key_step = 2, .handler = MSetNxCommand, .group = "string",
         .summary = "Atomically modifies the string values of one or more keys only when all "
                    "keys don't exist.",
         .since = "1.0.1"});
  const auto w = kCmdWrite | kCmdDenyOom;
  const auto r = kCmdReadonly | kCmdFast;
  t.Add({.name = "set", .arity = -3, .flags = w, .first_key = 1, .last_key = 1, .key_step = 1,
         .handler = SetCommand, .group = "string",
         .summary = "Sets the string value of a key, ignoring its type. The key is created if "
                    "it doesn't exist.",
         .since = "1.0.0"});
  t.Add({.name = "setnx", .arity = 3, .flags = w | kCmdFast, .first_key = 1, .last_key = 1,
         .key_step = 1, .handler = SetNxCommand, .group = "string",
         .summary = "Set the string value of a key only when the key doesn't exist.",
         .since = "1.0.0"});
  t.Add({.name = "get", .arity = 2, .flags = r, .first_key = 1, .last_key = 1, .key_step = 1,
         .handler = GetCommand, .group = "string",
         .summary = "Returns the string value of a key.", .since = "1.0.0"});
  t.Add({.name = "getdel", .arity = 2, .flags = kCmdWrite | kCmdFast, .first_key = 1,
         .last_key = 1, .key_step = 1, .handler = GetDelCommand, .group = "string",
         .summary = "Returns the string value of a key after deleting the key.",
         .since = "6.2.0"});
  t.Add({.name = "mget", .arity = -2, .flags = r, .first_key = 1, .last_key = -1,
         .key_step = 1, .handler = MGetCommand, .group = "string",
         .summary = "Atomically returns the string values of one or more keys.",
         .since = "1.0.0"});
  t.Add({.name = "incr", .arity = 2, .flags = w | kCmdFast, .first_key = 1, .last_key = 1,
         .key_step = 1, .handler = IncrCommand, .group = "string",
         .summary = "Increments the integer value of a key by one.", .since = "1.0.0"});
  t.Add({.name = "decr", .arity = 2, .flags = w | kCmdFast, .first_key = 1, .last_key = 1,
         .key_step = 1, .handler = DecrCommand, .group = "string",
         .summary = "Decrements the integer value of a key by one.", .since = "1.0.0"});
  t.Add({.name = "incrby", .arity = 3, .flags = w | kCmdFast, .first_key = 1, .last_key = 1,
         .key_step = 1, .handler = IncrByCommand, .group = "string",
         .summary = "Increments the integer value of a key by a number.", .since = "1.0.0"});
  t.Add({.name = "decrby", .arity = 3, .flags = w | kCmdFast, .first_key = 1, .last_key = 1,
         .key_step = 1, .handler = DecrByCommand, .group = "string",
         .summary = "Decrements a number from the integer value of a key.", .since = "1.0.0"});
}

}  // namespace latch
