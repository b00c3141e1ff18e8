// EXPIRE/PEXPIRE/EXPIREAT/PEXPIREAT [NX|XX|GT|LT], TTL/PTTL, EXPIRETIME/PEXPIRETIME, PERSIST.
// Deadlines are kept on the monotonic clock; absolute times are converted with the
// command's time snapshot (TimeSnapshot::WallToMono / MonoToWall).
#include <climits>
#include <mutex>
#include <string>

#include "commands/arg_parse.h"
#include "commands/command_table.h"
#include "commands/errors.h"
#include "commands/key_lock.h"

namespace latch {
namespace {

enum ExpireFlags : unsigned { kNx = 1, kXx = 2, kGt = 4, kLt = 8 };

void InvalidExpire(CommandContext& ctx, std::string_view name) {
  ctx.out.Error("ERR invalid expire time in '" + std::string(name) + "' command");
}

// unit_ms: 1000 for seconds; absolute: EXPIREAT/PEXPIREAT. name: lowercase command name.
void ExpireGeneric(CommandContext& ctx, std::int64_t unit_ms, bool absolute,
                   std::string_view name) {
  unsigned flags = 0;
  for (std::size_t j = 3; j < ctx.argc(); ++j) {
    std::string_view opt = ctx.arg(j);
    if (EqualsNoCase(opt, "nx")) {
      flags |= kNx;
    } else if (EqualsNoCase(opt, "xx")) {
      flags |= kXx;
    } else if (EqualsNoCase(opt, "gt")) {
      flags |= kGt;
    } else if (EqualsNoCase(opt, "lt")) {
      flags |= kLt;
    } else {
      ctx.out.Error("ERR Unsupported option " + std::string(opt));
      return;
    }
  }
  if ((flags & kNx) && (flags & (kXx | kGt | kLt))) {
    ctx.out.Error(errors::kExpireNxIncompatible);
    return;
  }
  if ((flags & kGt) && (flags & kLt)) {
    ctx.out.Error(errors::kExpireGtLtIncompatible);
    return;
  }
  std::int64_t when;
  if (!ParseInt64(ctx.arg(2), &when)) {
    ctx.out.Error(errors::kNotInteger);
    return;
  }
  if (unit_ms == 1000) {
    if (when > LLONG_MAX / 1000 || when < LLONG_MIN / 1000) {
      InvalidExpire(ctx, name);
      return;
    }
    when *= 1000;
  }
  // Work in wall-clock milliseconds like Redis (for its overflow rules), then convert.
  std::int64_t base = absolute ? 0 : ctx.now.wall_ms;
  if (when > LLONG_MAX - base) {
    InvalidExpire(ctx, name);
    return;
  }
  when += base;
  KeyRef k = Resolve(ctx.server.keyspace, ctx.arg(1));
  ShardGuard lock(*k.shard);
  store::Object* o = k.shard->Find(k.key, k.hash, ctx.now.mono_ms);
  if (o == nullptr) {
    ctx.out.Integer(0);
    return;
  }
  // For relative TTLs the new deadline is now_mono + ttl, exactly, on the monotonic clock.
  std::int64_t deadline_mono = absolute ? ctx.now.WallToMono(when) : when - base + ctx.now.mono_ms;
  if (flags) {
    bool has = o->has_expire();
    std::int64_t cur = o->expire_at();
    if ((flags & kNx) && has) return ctx.out.Integer(0);
    if ((flags & kXx) && !has) return ctx.out.Integer(0);
    if ((flags & kGt) && (!has || deadline_mono <= cur)) return ctx.out.Integer(0);
    if ((flags & kLt) && has && deadline_mono >= cur) return ctx.out.Integer(0);
  }
  if (deadline_mono <= ctx.now.mono_ms) {  // Redis: checkAlreadyExpired -> delete
    k.shard->Erase(o);
  } else {
    k.shard->SetDeadline(o, deadline_mono);
  }
  ctx.out.Integer(1);
}

void ExpireCommand(CommandContext& ctx) { ExpireGeneric(ctx, 1000, false, "expire"); }
void PExpireCommand(CommandContext& ctx) { ExpireGeneric(ctx, 1, false, "pexpire"); }
void ExpireAtCommand(CommandContext& ctx) { ExpireGeneric(ctx, 1000, true, "expireat"); }
void PExpireAtCommand(CommandContext& ctx) { ExpireGeneric(ctx, 1, true, "pexpireat"); }

// TTL/PTTL (remaining) and EXPIRETIME/PEXPIRETIME (absolute), rounded as Redis does.
void TtlGeneric(CommandContext& ctx, bool in_ms, bool absolute) {
  KeyRef k = Resolve(ctx.server.keyspace, ctx.arg(1));
  ShardGuard lock(*k.shard);
  store::Object* o = k.shard->Find(k.key, k.hash, ctx.now.mono_ms);
  if (o == nullptr) return ctx.out.Integer(-2);
  if (!o->has_expire()) return ctx.out.Integer(-1);
  std::int64_t v = absolute ? ctx.now.MonoToWall(o->expire_at()) : o->expire_at() - ctx.now.mono_ms;
  if (v < 0) v = 0;
  // Rounded to seconds without overflowing at INT64_MAX (PEXPIREAT k 9223372036854775807):
  // Redis answers EXPIRETIME 9223372036854776 there, as unsigned arithmetic does.
  const auto seconds = static_cast<std::int64_t>((static_cast<std::uint64_t>(v) + 500) / 1000);
  ctx.out.Integer(in_ms ? v : seconds);
}

void TtlCommand(CommandContext& ctx) { TtlGeneric(ctx, false, false); }
void PTtlCommand(CommandContext& ctx) { TtlGeneric(ctx, true, false); }
void ExpireTimeCommand(CommandContext& ctx) { TtlGeneric(ctx, false, true); }
void PExpireTimeCommand(CommandContext& ctx) { TtlGeneric(ctx, true, true); }

void PersistCommand(CommandContext& ctx) {
  KeyRef k = Resolve(ctx.server.keyspace, ctx.arg(1));
  ShardGuard lock(*k.shard);
  store::Object* o = k.shard->Find(k.key, k.hash, ctx.now.mono_ms);
  if (o == nullptr || !o->has_expire()) return ctx.out.Integer(0);
  k.shard->SetDeadline(o, 0);
  ctx.out.Integer(1);
}

CommandSpec KeyCommand(std::string name, int arity, std::uint32_t flags, CommandHandler h,
                       std::string_view summary, std::string_view since) {
  return CommandSpec{.name = std::move(name), .arity = arity, .flags = flags, .first_key = 1,
                     .last_key = 1, .key_step = 1, .handler = h, .group = "generic",
                     .summary = summary, .since = since};
}

}  // namespace

void RegisterExpireCommands(CommandTable& t) {
  const auto w = kCmdWrite | kCmdFast;
  const auto r = kCmdReadonly | kCmdFast;
  t.Add(KeyCommand("expire", -3, w, ExpireCommand,
                   "Sets the expiration time of a key in seconds.", "1.0.0"));
  t.Add(KeyCommand("pexpire", -3, w, PExpireCommand,
                   "Sets the expiration time of a key in milliseconds.", "2.6.0"));
  t.Add(KeyCommand("expireat", -3, w, ExpireAtCommand,
                   "Sets the expiration time of a key to a Unix timestamp.", "1.2.0"));
  t.Add(KeyCommand("pexpireat", -3, w, PExpireAtCommand,
                   "Sets the expiration time of a key to a Unix milliseconds timestamp.",
                   "2.6.0"));
  t.Add(KeyCommand("ttl", 2, r, TtlCommand, "Returns the expiration time in seconds of a key.",
                   "1.0.0"));
  t.Add(KeyCommand("pttl", 2, r, PTtlCommand,
                   "Returns the expiration time in milliseconds of a key.", "2.6.0"));
  t.Add(KeyCommand("expiretime", 2, r, ExpireTimeCommand,
                   "Returns the expiration time of a key as a Unix timestamp.", "7.0.0"));
  t.Add(KeyCommand("pexpiretime", 2, r, PExpireTimeCommand,
                   "Returns the expiration time of a key as a Unix milliseconds timestamp.",
                   "7.0.0"));
  t.Add(KeyCommand("persist", 2, w, PersistCommand, "Removes the expiration time of a key.",
                   "2.2.0"));
}

}  // namespace latch
