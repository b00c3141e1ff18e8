// SET (with Redis 8.4's IFEQ/IFNE/IFDEQ/IFDNE), SETNX, GET, GETDEL, MGET, INCR/INCRBY/DECR/DECRBY: Redis 7 string semantics.
#include <charconv>
#include <climits>
#include <mutex>
#include <vector>

#include "commands/arg_parse.h"
#include "commands/command_table.h"
#include "commands/errors.h"
#include "commands/key_lock.h"
#include "commands/value_digest.h"
#include "journal/server_hooks.h"

namespace latch {
namespace {

enum SetFlags : unsigned {
  kNx = 1, kXx = 2, kGet = 4, kKeepTtl = 8, kEx = 16, kPx = 32, kExAt = 64, kPxAt = 128,
  kIfCond = 256,  // one of Redis 8.4's IFEQ / IFNE / IFDEQ / IFDNE (SetArgs::cond)
};
constexpr unsigned kAnyExpire = kEx | kPx | kExAt | kPxAt;

struct SetArgs {
  unsigned flags = 0;
  std::string_view expire;
  std::int64_t deadline_mono = 0;  // resolved deadline when an expire option was given
  ValueCond cond = ValueCond::kNone;
  std::string_view cond_arg;  // the value or digest the condition compares with
};

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

// Parses SET's options (Redis's parseExtendedStringArgumentsOrReply rules: any order,
// case-insensitive, a repeated expire option of the same kind is allowed and the last wins).
// Redis 8.4's conditions IFEQ/IFNE/IFDEQ/IFDNE take one argument and exclude each other and
// NX/XX (a second condition is a syntax error; NX NX stays allowed as in Redis 7).
// Replies the error and returns false on failure.
bool ParseSetArgs(CommandContext& ctx, SetArgs* a) {
  unsigned& f = a->flags;
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
          a->cond = cond;
          a->cond_arg = ctx.arg(++j);
        }
        break;
    }
    // The same expire option may repeat (the last wins); two different ones may not.
    if (expire != 0 && has_next && !(f & kKeepTtl) && !(f & (kAnyExpire & ~expire))) {
      ok = true;
      f |= expire;
      a->expire = ctx.arg(++j);
    }
    if (!ok) {
      ctx.out.Error(errors::kSyntax);
      return false;
    }
  }
  if (!(f & kAnyExpire)) return true;
  std::int64_t v;
  if (!ParseInt64(a->expire, &v)) {
    ctx.out.Error(errors::kNotInteger);
    return false;
  }
  bool seconds = f & (kEx | kExAt);
  if (v <= 0 || (seconds && v > LLONG_MAX / 1000)) {
    ctx.out.Error("ERR invalid expire time in 'set' command");
    return false;
  }
  if (seconds) v *= 1000;
  if (f & (kEx | kPx)) {
    if (v > LLONG_MAX - ctx.now.wall_ms) {
      ctx.out.Error("ERR invalid expire time in 'set' command");
      return false;
    }
    a->deadline_mono = ctx.now.mono_ms + v;
  } else {
    // Absolute Unix time: converted once, against this command's snapshot.
    a->deadline_mono = ctx.now.WallToMono(v);
    if (a->deadline_mono <= 0) a->deadline_mono = 1;  // already in the past
  }
  return true;
}

void SetCommand(CommandContext& ctx) {
  SetArgs a;
  if (!ParseSetArgs(ctx, &a)) return;
  KeyRef k = Resolve(ctx.server.keyspace, ctx.arg(1));
  ShardGuard lock(*k.shard);
  store::Object* o = k.shard->Find(k.key, k.hash, ctx.now.mono_ms);
  bool skip = ((a.flags & kNx) && o != nullptr) || ((a.flags & kXx) && o == nullptr);
  if (a.flags & kIfCond) {
    if (o == nullptr) {
      // IFEQ/IFDEQ never create the key; IFNE/IFDNE do (nothing differs from a missing key).
      skip = a.cond == ValueCond::kIfEq || a.cond == ValueCond::kIfDeq;
    } else {
      CondResult r = CheckValueCond(a.cond, a.cond_arg, o->value());
      if (r == CondResult::kBadDigest) return ctx.out.Error(kDigestFormatError);
      skip = r == CondResult::kNotMet;
    }
  }
  // With GET the old value is the reply whether or not the value was set.
  if (a.flags & kGet) {
    if (o == nullptr) {
      ctx.out.Null();
    } else {
      ctx.out.Bulk(o->value());
    }
  }
  // lock-restart-delay: a grant (SET NX creating the key) is answered as for a held lock.
  if (!skip && o == nullptr && (a.flags & kNx)) {
    skip = journal::GrantsHeldBack(ctx.server, ctx.now.mono_ms);
  }
  if (skip) {
    if (!(a.flags & kGet)) ctx.out.Null();
    return;
  }
  o = k.shard->Set(o, k.key, ctx.arg(2), a.flags & kKeepTtl);
  if (a.flags & kAnyExpire) k.shard->SetDeadline(o, a.deadline_mono);
  if (!(a.flags & kGet)) ctx.out.Ok();
}

void SetNxCommand(CommandContext& ctx) {
  KeyRef k = Resolve(ctx.server.keyspace, ctx.arg(1));
  ShardGuard lock(*k.shard);
  store::Object* o = k.shard->Find(k.key, k.hash, ctx.now.mono_ms);
  if (o != nullptr || journal::GrantsHeldBack(ctx.server, ctx.now.mono_ms)) {
    ctx.out.Integer(0);
    return;
  }
  k.shard->Set(nullptr, k.key, ctx.arg(2), false);
  ctx.out.Integer(1);
}

void CountHit(CommandContext& ctx, bool hit) {
  (hit ? ctx.server.stats.keyspace_hits : ctx.server.stats.keyspace_misses)
      .fetch_add(1, std::memory_order_relaxed);
}

// GET's reply for a looked-up object (nil when missing), counted as a hit or a miss.
void ReplyValue(CommandContext& ctx, const store::Object* o) {
  CountHit(ctx, o != nullptr);
  if (o == nullptr) {
    ctx.out.Null();
  } else {
    ctx.out.Bulk(o->value());
  }
}

void GetCommand(CommandContext& ctx) {
  KeyRef k = Resolve(ctx.server.keyspace, ctx.arg(1));
  ShardGuard lock(*k.shard);
  ReplyValue(ctx, k.shard->Find(k.key, k.hash, ctx.now.mono_ms));
}

void GetDelCommand(CommandContext& ctx) {
  KeyRef k = Resolve(ctx.server.keyspace, ctx.arg(1));
  ShardGuard lock(*k.shard);
  store::Object* o = k.shard->Find(k.key, k.hash, ctx.now.mono_ms);
  ReplyValue(ctx, o);
  if (o != nullptr) k.shard->Erase(o);
}

void MGetCommand(CommandContext& ctx) {
  MultiShardLock lock(ctx.server.keyspace, ctx.args.subspan(1));
  ctx.out.ArrayHeader(lock.refs().size());
  for (const KeyRef& k : lock.refs()) {
    ReplyValue(ctx, k.shard->Find(k.key, k.hash, ctx.now.mono_ms));
  }
}

// INCRBY and friends: the value must parse as int64; the TTL is kept.
void IncrBy(CommandContext& ctx, std::int64_t delta) {
  KeyRef k = Resolve(ctx.server.keyspace, ctx.arg(1));
  ShardGuard lock(*k.shard);
  store::Object* o = k.shard->Find(k.key, k.hash, ctx.now.mono_ms);
  std::int64_t cur = 0;
  if (o != nullptr && !ParseInt64(o->value(), &cur)) {
    ctx.out.Error(errors::kNotInteger);
    return;
  }
  if ((delta < 0 && cur < 0 && delta < LLONG_MIN - cur) ||
      (delta > 0 && cur > 0 && delta > LLONG_MAX - cur)) {
    ctx.out.Error(errors::kOverflow);
    return;
  }
  std::int64_t next = cur + delta;
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), next);
  (void)ec;
  k.shard->Set(o, k.key, std::string_view(buf, static_cast<std::size_t>(end - buf)), true);
  ctx.out.Integer(next);
}

void IncrCommand(CommandContext& ctx) { IncrBy(ctx, 1); }
void DecrCommand(CommandContext& ctx) { IncrBy(ctx, -1); }

void IncrByCommand(CommandContext& ctx) {
  std::int64_t d;
  if (!ParseInt64(ctx.arg(2), &d)) {
    ctx.out.Error(errors::kNotInteger);
    return;
  }
  IncrBy(ctx, d);
}

void DecrByCommand(CommandContext& ctx) {
  std::int64_t d;
  if (!ParseInt64(ctx.arg(2), &d)) {
    ctx.out.Error(errors::kNotInteger);
    return;
  }
  if (d == LLONG_MIN) {
    ctx.out.Error(errors::kDecrOverflow);
    return;
  }
  IncrBy(ctx, -d);
}

// MSET / MSETNX: all keys are set under their shards' locks at once; like SET, they drop
// any TTL the keys had.
bool MSetGeneric(CommandContext& ctx, bool nx) {
  std::vector<std::string_view> keys;
  for (std::size_t i = 1; i < ctx.argc(); i += 2) keys.push_back(ctx.arg(i));
  MultiShardLock lock(ctx.server.keyspace, keys);
  const auto& refs = lock.refs();
  if (nx) {
    for (const KeyRef& k : refs) {
      if (k.shard->Find(k.key, k.hash, ctx.now.mono_ms) != nullptr) return false;
    }
  }
  for (std::size_t i = 0; i < refs.size(); ++i) {
    const KeyRef& k = refs[i];
    store::Object* o = k.shard->Find(k.key, k.hash, ctx.now.mono_ms);
    k.shard->Set(o, k.key, ctx.arg(2 * i + 2), false);
  }
  return true;
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
