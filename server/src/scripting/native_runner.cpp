#include "scripting/native_runner.h"

#include <cstdint>
#include <optional>

#include "commands/errors.h"
#include "commands/expiry_arg.h"
#include "commands/key_lock.h"
#include "store/key_ops.h"
#include "store/string_ops.h"

namespace latch::scripting {
namespace {

// TTL arguments on the fast path: strictly positive and small enough that no sum or
// deadline below can overflow (about 35 years). Anything else goes to Lua.
constexpr std::int64_t kMaxFastTtl = std::int64_t{1} << 40;

// Through the one expiry parser (PX's rules), then the fast path's own bound.
bool FastTtl(const CommandContext& ctx, std::string_view arg, std::int64_t* ms) {
  std::int64_t deadline = 0;
  if (ParseExpiry(arg, ExpiryForm{.positive_only = true}, ctx.now, &deadline) !=
      ExpiryStatus::kOk) {
    return false;
  }
  *ms = deadline - ctx.now.mono_ms;
  return *ms <= kMaxFastTtl;
}

// The fast path's own locking: the script's keys, hashed once, their shards held. A busy
// Lua script holding one answers BUSY (written here, so the call counts as handled). One
// key (every script but node-redlock's) is resolved on the stack and its shard taken with
// one try_lock, as the dispatcher does for a single-key command.
class ScriptKeys {
 public:
  ScriptKeys(CommandContext& ctx, std::span<const std::string_view> keys) {
    if (keys.size() == 1) {
      one_ = Resolve(ctx.db(), keys[0]);
      refs_one_ = true;
      if (store::ThisThreadHolds(*one_.shard)) {
        locked_ = true;  // EXEC or a script holds every shard
      } else if (store::LockShard(*one_.shard, GiveUpFlag(ctx))) {
        locked_ = true;
        held_one_ = one_.shard;
      }
    } else {
      refs_.emplace().Resolve(ctx.db(), keys);
      locked_ = lock_.emplace().Lock(ctx.db(), refs_->refs(), GiveUpFlag(ctx));
    }
    if (!locked_) ctx.out.Error(errors::kBusyScript);
  }
  ~ScriptKeys() {
    if (held_one_ != nullptr) store::UnlockShard(*held_one_);
  }
  ScriptKeys(const ScriptKeys&) = delete;
  ScriptKeys& operator=(const ScriptKeys&) = delete;

  bool locked() const { return locked_; }
  std::span<const KeyRef> refs() const {
    return refs_one_ ? std::span<const KeyRef>(&one_, 1) : refs_->refs();
  }
  const KeyRef& operator[](std::size_t i) const { return refs()[i]; }

 private:
  KeyRef one_;
  bool refs_one_ = false;
  store::Shard* held_one_ = nullptr;
  std::optional<KeyRefs> refs_;  // several keys
  std::optional<ShardSet> lock_;
  bool locked_ = false;
};

// Counts a lookup like GET does (INFO keyspace_hits / keyspace_misses).
void CountHit(CommandContext& ctx, bool hit) {
  (hit ? ctx.server.stats.keyspace_hits : ctx.server.stats.keyspace_misses)
      .fetch_add(1, std::memory_order_relaxed);
}

store::Object* Get(CommandContext& ctx, const KeyRef& k) {
  store::Object* o = k.shard->Find(k.key, k.hash, ctx.now.mono_ms);
  CountHit(ctx, o != nullptr);
  return o;
}

bool Owns(const store::Object* o, std::string_view owner) {
  return o != nullptr && !o->is_container() && o->value() == owner;
}

// SET key value PX ttl (the value replaces any old one; the TTL is the new one).
void SetPx(CommandContext& ctx, const KeyRef& k, std::string_view value, std::int64_t ttl_ms) {
  store::SetParams p;
  p.expiry = store::Expiry::At(ctx.now.mono_ms + ttl_ms);
  store::OpSet(k, value, p, ctx.env(), nullptr);
}

// The lock idiom's counters: an acquire script's grant or refusal counts as LOCK.ACQUIRE's.
void CountAcquire(CommandContext& ctx, bool granted, std::uint64_t n = 1) {
  store::LockStats& stats = ctx.server.locks.stats();
  (granted ? stats.grants : stats.contended).fetch_add(n, std::memory_order_relaxed);
}

// PEXPIRE on a key the script has just read as its own.
void PExpire(CommandContext& ctx, const KeyRef& k, std::string_view owner, std::int64_t ttl) {
  store::OpExpireIfOwner(k, owner, ctx.now.mono_ms + ttl, ctx.env());
}

// PTTL as the script sees it: -1 without a TTL, else the remaining milliseconds.
std::int64_t PTtl(CommandContext& ctx, const store::Object* o) {
  if (!o->has_expire()) return -1;
  std::int64_t left = o->expire_at() - ctx.now.mono_ms;
  return left < 0 ? 0 : left;
}

bool CompareAndDelete(CommandContext& ctx, std::span<const std::string_view> keys,
                      std::string_view owner, bool minus_one_when_missing) {
  ScriptKeys k(ctx, keys.first(1));
  if (!k.locked()) return true;
  // The lock idiom's release, counted as such (a non-owner's attempt too).
  const store::OpStatus s = store::OpDelIf(k[0], ValueCond::kIfEq, owner, ctx.env());
  if (s == store::OpStatus::kWrongType) return false;  // Lua raises Redis's WRONGTYPE
  CountHit(ctx, s != store::OpStatus::kNoKey);  // the script's GET
  if (s == store::OpStatus::kNoKey && minus_one_when_missing) return ctx.out.Integer(-1), true;
  ctx.out.Integer(s == store::OpStatus::kOk ? 1 : 0);
  return true;
}

// GET == owner ? PEXPIRE ttl -> 1 : (set_nx ? SET NX PX -> 1 | 0 : 0).
bool CompareAndPExpire(CommandContext& ctx, std::span<const std::string_view> keys,
                       std::string_view owner, std::string_view ttl_arg, bool set_nx) {
  std::int64_t ttl = 0;
  const bool ttl_ok = FastTtl(ctx, ttl_arg, &ttl);
  if (set_nx && !ttl_ok) return false;  // SET rejects a bad TTL before looking at NX
  ScriptKeys k(ctx, keys.first(1));
  if (!k.locked()) return true;
  store::Object* o = Get(ctx, k[0]);
  if (Owns(o, owner)) {
    if (!ttl_ok) return false;
    PExpire(ctx, k[0], owner, ttl);
    ctx.out.Integer(1);
  } else if (set_nx && o == nullptr) {
    if (ctx.server.OverMaxmemory()) return false;  // Lua answers -OOM for the first write
    if (ctx.env().grants_held) return false;  // lock-restart-delay: Lua's SET NX says "held"
    SetPx(ctx, k[0], owner, ttl);
    CountAcquire(ctx, true);
    ctx.out.Integer(1);
  } else {
    ctx.out.Integer(0);
  }
  return true;
}

bool RedisPyExtend(CommandContext& ctx, std::span<const std::string_view> keys,
                   std::span<const std::string_view> argv) {
  std::int64_t additional = 0;
  if (!ParseInt64(argv[1], &additional) || additional > kMaxFastTtl || additional < -kMaxFastTtl) {
    return false;
  }
  const bool relative = argv[2] == "0";
  ScriptKeys k(ctx, keys.first(1));
  if (!k.locked()) return true;
  store::Object* o = Get(ctx, k[0]);
  if (!Owns(o, argv[0])) return ctx.out.Integer(0), true;
  const std::int64_t expiration = PTtl(ctx, o);
  if (expiration < 0) return ctx.out.Integer(0), true;
  const std::int64_t new_ttl = relative ? additional + expiration : additional;
  if (new_ttl <= 0) return false;  // PEXPIRE would delete the key: leave it to Lua
  PExpire(ctx, k[0], argv[0], new_ttl);
  ctx.out.Integer(1);
  return true;
}

bool RedisPyReacquire(CommandContext& ctx, std::span<const std::string_view> keys,
                      std::string_view owner, std::string_view ttl_arg) {
  std::int64_t ttl = 0;
  const bool ttl_ok = FastTtl(ctx, ttl_arg, &ttl);
  ScriptKeys k(ctx, keys.first(1));
  if (!k.locked()) return true;
  store::Object* o = Get(ctx, k[0]);
  if (!Owns(o, owner)) return ctx.out.Integer(0), true;
  if (!ttl_ok) return false;
  PExpire(ctx, k[0], owner, ttl);
  ctx.out.Integer(1);
  return true;
}

// node-redlock v5 acquire (every key free) and extend (every key ours): then SET PX on all.
bool RedlockSetAll(CommandContext& ctx, std::span<const std::string_view> keys,
                   std::span<const std::string_view> argv, bool acquire) {
  std::int64_t ttl = 0;
  if (!FastTtl(ctx, argv[1], &ttl)) return false;
  ScriptKeys k(ctx, keys);
  if (!k.locked()) return true;
  for (const KeyRef& r : k.refs()) {
    store::Object* o = acquire ? r.shard->Find(r.key, r.hash, ctx.now.mono_ms) : Get(ctx, r);
    if (acquire ? o != nullptr : !Owns(o, argv[0])) {
      if (acquire) CountAcquire(ctx, false);
      return ctx.out.Integer(0), true;
    }
  }
  // The script's first write is SET (denyoom), for extend too: Lua answers -OOM as Redis.
  if (ctx.server.OverMaxmemory()) return false;
  if (acquire && ctx.env().grants_held) return false;  // lock-restart-delay, as above
  for (const KeyRef& r : k.refs()) SetPx(ctx, r, argv[0], ttl);
  if (acquire) CountAcquire(ctx, true, keys.size());
  ctx.out.Integer(static_cast<std::int64_t>(keys.size()));
  return true;
}

bool RedlockRelease(CommandContext& ctx, std::span<const std::string_view> keys,
                    std::string_view owner) {
  ScriptKeys k(ctx, keys);
  if (!k.locked()) return true;
  std::int64_t count = 0;
  for (const KeyRef& r : k.refs()) {
    const store::OpStatus s = store::OpDelIf(r, ValueCond::kIfEq, owner, ctx.env());
    CountHit(ctx, s != store::OpStatus::kNoKey);
    if (s == store::OpStatus::kOk) ++count;
  }
  ctx.out.Integer(count);
  return true;
}

bool UpstashExtend(CommandContext& ctx, std::span<const std::string_view> keys,
                   std::string_view owner, std::string_view seconds_arg) {
  std::int64_t extra = 0;
  if (!ParseInt64(seconds_arg, &extra) || extra > kMaxFastTtl / 1000 ||
      extra < -kMaxFastTtl / 1000) {
    return false;
  }
  ScriptKeys k(ctx, keys.first(1));
  if (!k.locked()) return true;
  store::Object* o = Get(ctx, k[0]);
  if (!Owns(o, owner)) return ctx.out.Integer(0), true;
  const std::int64_t ms = PTtl(ctx, o);
  const std::int64_t ttl = ms < 0 ? -1 : (ms + 500) / 1000;  // TTL's rounding
  if (ttl <= 0) return ctx.out.Integer(0), true;
  const std::int64_t seconds = ttl + extra;
  if (seconds <= 0) return false;  // EXPIRE would delete the key: leave it to Lua
  PExpire(ctx, k[0], owner, seconds * 1000);
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
  // The journal cannot be written: Lua's redis.call answers a write -MISCONF, as Redis.
  if (ctx.server.journal_write_errno.load(std::memory_order_relaxed) != 0) return false;
  switch (kind) {
    case NativeKind::kNone:
      return false;
    case NativeKind::kCompareAndDelete:
    case NativeKind::kRedisPyRelease:
      return need(1, 1) && CompareAndDelete(ctx, keys, argv[0], false);
    case NativeKind::kRedsyncDelete:
      return need(1, 1) && CompareAndDelete(ctx, keys, argv[0], true);
    case NativeKind::kCompareAndPExpire:
      return need(1, 2) && CompareAndPExpire(ctx, keys, argv[0], argv[1], false);
    case NativeKind::kRedsyncTouchWithSetNx:
      return need(1, 2) && CompareAndPExpire(ctx, keys, argv[0], argv[1], true);
    case NativeKind::kRedisPyExtend:
      return need(1, 3) && RedisPyExtend(ctx, keys, argv);
    case NativeKind::kRedisPyReacquire:
      return need(1, 2) && RedisPyReacquire(ctx, keys, argv[0], argv[1]);
    case NativeKind::kRedlockAcquire:
      return need(0, 2) && RedlockSetAll(ctx, keys, argv, true);
    case NativeKind::kRedlockExtend:
      return need(0, 2) && RedlockSetAll(ctx, keys, argv, false);
    case NativeKind::kRedlockRelease:
      return need(0, 1) && RedlockRelease(ctx, keys, argv[0]);
    case NativeKind::kUpstashExtend:
      return need(1, 2) && UpstashExtend(ctx, keys, argv[0], argv[1]);
  }
  return false;
}

}  // namespace latch::scripting
