#include "scripting/native_runner.h"

#include <cstdint>

#include "commands/arg_parse.h"
#include "commands/key_lock.h"
#include "journal/server_hooks.h"

namespace latch::scripting {
namespace {

// TTL arguments on the fast path: strictly positive and small enough that no sum or
// deadline below can overflow (about 35 years). Anything else goes to Lua.
constexpr std::int64_t kMaxFastTtl = std::int64_t{1} << 40;

bool FastTtl(std::string_view arg, std::int64_t* ms) {
  return ParseInt64(arg, ms) && *ms > 0 && *ms <= kMaxFastTtl;
}

// Counts the lookup like GET does (INFO keyspace_hits / keyspace_misses).
store::Object* Get(CommandContext& ctx, const KeyRef& k) {
  store::Object* o = k.shard->Find(k.key, k.hash, ctx.now.mono_ms);
  (o ? ctx.server.stats.keyspace_hits : ctx.server.stats.keyspace_misses)
      .fetch_add(1, std::memory_order_relaxed);
  return o;
}

bool Owns(const store::Object* o, std::string_view owner) {
  return o != nullptr && o->value() == owner;
}

// WATCH sees a change made here as it sees one made by a command.
void Touched(CommandContext& ctx, std::string_view key) {
  if (ctx.server.watches.active()) ctx.server.watches.Touch(key);
}

void PExpire(CommandContext& ctx, const KeyRef& k, store::Object* o, std::int64_t ttl_ms) {
  k.shard->SetDeadline(o, ctx.now.mono_ms + ttl_ms);
  Touched(ctx, k.key);
}

void Erase(CommandContext& ctx, const KeyRef& k, store::Object* o) {
  k.shard->Erase(o);
  Touched(ctx, k.key);
}

// SET key value PX ttl (the value replaces any old one; the TTL is the new one).
void SetPx(CommandContext& ctx, const KeyRef& k, std::string_view value, std::int64_t ttl_ms) {
  store::Object* o = k.shard->Find(k.key, k.hash, ctx.now.mono_ms);
  o = k.shard->Set(o, k.key, value, false);
  k.shard->SetDeadline(o, ctx.now.mono_ms + ttl_ms);
  Touched(ctx, k.key);
}

// PTTL as the script sees it: -1 without a TTL, else the remaining milliseconds.
std::int64_t PTtl(CommandContext& ctx, const store::Object* o) {
  if (!o->has_expire()) return -1;
  std::int64_t left = o->expire_at() - ctx.now.mono_ms;
  return left < 0 ? 0 : left;
}

bool CompareAndDelete(CommandContext& ctx, std::string_view key, std::string_view owner,
                      bool minus_one_when_missing) {
  KeyRef k = Resolve(ctx.server.keyspace, key);
  ShardGuard lock(*k.shard);
  store::Object* o = Get(ctx, k);
  if (o == nullptr && minus_one_when_missing) {
    ctx.out.Integer(-1);
  } else if (Owns(o, owner)) {
    Erase(ctx, k, o);
    ctx.out.Integer(1);
  } else {
    ctx.out.Integer(0);
  }
  return true;
}

// GET == owner ? PEXPIRE ttl -> 1 : (set_nx ? SET NX PX -> 1 | 0 : 0).
bool CompareAndPExpire(CommandContext& ctx, std::string_view key, std::string_view owner,
                       std::string_view ttl_arg, bool set_nx) {
  std::int64_t ttl = 0;
  bool ttl_ok = FastTtl(ttl_arg, &ttl);
  if (set_nx && !ttl_ok) return false;  // SET rejects a bad TTL before looking at NX
  KeyRef k = Resolve(ctx.server.keyspace, key);
  ShardGuard lock(*k.shard);
  store::Object* o = Get(ctx, k);
  if (Owns(o, owner)) {
    if (!ttl_ok) return false;
    PExpire(ctx, k, o, ttl);
    ctx.out.Integer(1);
  } else if (set_nx && o == nullptr) {
    if (ctx.server.OverMaxmemory()) return false;  // Lua answers -OOM for the first write
    // lock-restart-delay: Lua's SET NX gives the "held" answer.
    if (journal::GrantsHeldBack(ctx.server, ctx.now.mono_ms)) return false;
    SetPx(ctx, k, owner, ttl);
    ctx.out.Integer(1);
  } else {
    ctx.out.Integer(0);
  }
  return true;
}

bool RedisPyExtend(CommandContext& ctx, std::string_view key,
                   std::span<const std::string_view> argv) {
  std::int64_t additional = 0;
  if (!ParseInt64(argv[1], &additional) || additional > kMaxFastTtl ||
      additional < -kMaxFastTtl) {
    return false;
  }
  bool relative = argv[2] == "0";
  KeyRef k = Resolve(ctx.server.keyspace, key);
  ShardGuard lock(*k.shard);
  store::Object* o = Get(ctx, k);
  if (!Owns(o, argv[0])) {
    ctx.out.Integer(0);
    return true;
  }
  std::int64_t expiration = PTtl(ctx, o);
  if (expiration < 0) {
    ctx.out.Integer(0);
    return true;
  }
  std::int64_t new_ttl = relative ? additional + expiration : additional;
  if (new_ttl <= 0) return false;  // PEXPIRE would delete the key: leave it to Lua
  PExpire(ctx, k, o, new_ttl);
  ctx.out.Integer(1);
  return true;
}

bool RedisPyReacquire(CommandContext& ctx, std::string_view key, std::string_view owner,
                      std::string_view ttl_arg) {
  std::int64_t ttl = 0;
  bool ttl_ok = FastTtl(ttl_arg, &ttl);
  KeyRef k = Resolve(ctx.server.keyspace, key);
  ShardGuard lock(*k.shard);
  store::Object* o = Get(ctx, k);
  if (!Owns(o, owner)) {
    ctx.out.Integer(0);
    return true;
  }
  if (!ttl_ok) return false;
  PExpire(ctx, k, o, ttl);
  ctx.out.Integer(1);
  return true;
}

// node-redlock v5 acquire (every key free) and extend (every key ours): then SET PX on all.
bool RedlockSetAll(CommandContext& ctx, std::span<const std::string_view> keys,
                   std::span<const std::string_view> argv, bool acquire) {
  std::int64_t ttl = 0;
  if (!FastTtl(argv[1], &ttl)) return false;
  MultiShardLock lock(ctx.server.keyspace, keys);
  for (const KeyRef& k : lock.refs()) {
    store::Object* o = acquire ? k.shard->Find(k.key, k.hash, ctx.now.mono_ms) : Get(ctx, k);
    if (acquire ? o != nullptr : !Owns(o, argv[0])) {
      ctx.out.Integer(0);
      return true;
    }
  }
  // The script's first write is SET (denyoom), for extend too: Lua answers -OOM as Redis.
  if (ctx.server.OverMaxmemory()) return false;
  if (acquire && journal::GrantsHeldBack(ctx.server, ctx.now.mono_ms)) return false;  // as above
  for (const KeyRef& k : lock.refs()) SetPx(ctx, k, argv[0], ttl);
  ctx.out.Integer(static_cast<std::int64_t>(keys.size()));
  return true;
}

bool RedlockRelease(CommandContext& ctx, std::span<const std::string_view> keys,
                    std::string_view owner) {
  MultiShardLock lock(ctx.server.keyspace, keys);
  std::int64_t count = 0;
  for (const KeyRef& k : lock.refs()) {
    store::Object* o = Get(ctx, k);
    if (Owns(o, owner)) {
      Erase(ctx, k, o);
      ++count;
    }
  }
  ctx.out.Integer(count);
  return true;
}

bool UpstashExtend(CommandContext& ctx, std::string_view key, std::string_view owner,
                   std::string_view seconds_arg) {
  std::int64_t extra = 0;
  if (!ParseInt64(seconds_arg, &extra) || extra > kMaxFastTtl / 1000 ||
      extra < -kMaxFastTtl / 1000) {
    return false;
  }
  KeyRef k = Resolve(ctx.server.keyspace, key);
  ShardGuard lock(*k.shard);
  store::Object* o = Get(ctx, k);
  if (!Owns(o, owner)) {
    ctx.out.Integer(0);
    return true;
  }
  std::int64_t ms = PTtl(ctx, o);
  std::int64_t ttl = ms < 0 ? -1 : (ms + 500) / 1000;  // TTL's rounding
  if (ttl <= 0) {
    ctx.out.Integer(0);
    return true;
  }
  std::int64_t seconds = ttl + extra;
  if (seconds <= 0) return false;  // EXPIRE would delete the key: leave it to Lua
  PExpire(ctx, k, o, seconds * 1000);
  ctx.out.Integer(1);
  return true;
}

}  // namespace

bool RunNative(NativeKind kind, CommandContext& ctx, std::span<const std::string_view> keys,
               std::span<const std::string_view> argv) {
  // Each script reads KEYS[1] and ARGV[1..n]; a missing one is nil in Lua: not our case.
  auto need = [&](std::size_t nkeys, std::size_t nargs) {
    return keys.size() >= nkeys && argv.size() >= nargs;
  };
  switch (kind) {
    case NativeKind::kNone:
      return false;
    case NativeKind::kCompareAndDelete:
    case NativeKind::kRedisPyRelease:
      return need(1, 1) && CompareAndDelete(ctx, keys[0], argv[0], false);
    case NativeKind::kRedsyncDelete:
      return need(1, 1) && CompareAndDelete(ctx, keys[0], argv[0], true);
    case NativeKind::kCompareAndPExpire:
      return need(1, 2) && CompareAndPExpire(ctx, keys[0], argv[0], argv[1], false);
    case NativeKind::kRedsyncTouchWithSetNx:
      return need(1, 2) && CompareAndPExpire(ctx, keys[0], argv[0], argv[1], true);
    case NativeKind::kRedisPyExtend:
      return need(1, 3) && RedisPyExtend(ctx, keys[0], argv);
    case NativeKind::kRedisPyReacquire:
      return need(1, 2) && RedisPyReacquire(ctx, keys[0], argv[0], argv[1]);
    case NativeKind::kRedlockAcquire:
      return need(0, 2) && RedlockSetAll(ctx, keys, argv, true);
    case NativeKind::kRedlockExtend:
      return need(0, 2) && RedlockSetAll(ctx, keys, argv, false);
    case NativeKind::kRedlockRelease:
      return need(0, 1) && RedlockRelease(ctx, keys, argv[0]);
    case NativeKind::kUpstashExtend:
      return need(1, 2) && UpstashExtend(ctx, keys[0], argv[0], argv[1]);
  }
  return false;
}

}  // namespace latch::scripting
