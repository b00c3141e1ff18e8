// EXPIRE/PEXPIRE/EXPIREAT/PEXPIREAT [NX|XX|GT|LT], TTL/PTTL, EXPIRETIME/PEXPIRETIME, PERSIST.
// Deadlines are kept on the monotonic clock; absolute times are converted with the
// command's time snapshot (TimeSnapshot::WallToMono / MonoToWall).
#include <climits>
#include <string>

#include "commands/arg_parse.h"
#include "commands/command_table.h"
#include "commands/errors.h"
#include "commands/expiry_arg.h"
#include "commands/key_lock.h"
#include "latch/protocol/error_arg.h"
#include "store/key_ops.h"

namespace latch {
namespace {

void InvalidExpire(CommandContext& ctx, std::string_view name) {
  ctx.out.Error("ERR invalid expire time in '" + std::string(name) + "' command");
}

// Parses NX|XX|GT|LT (Redis's rules: any number, in any order). Replies the error on failure.
bool ParseExpireFlags(CommandContext& ctx, unsigned* flags) {
  using P = store::ExpireParams;
  for (std::size_t j = 3; j < ctx.argc(); ++j) {
    switch (FoldWord(ctx.arg(j))) {
      case Word("nx"): *flags |= P::kNx; break;
      case Word("xx"): *flags |= P::kXx; break;
      case Word("gt"): *flags |= P::kGt; break;
      case Word("lt"): *flags |= P::kLt; break;
      default:
        ctx.out.Error("ERR Unsupported option " + std::string(protocol::ErrorArg(ctx.arg(j))));
        return false;
    }
  }
  if ((*flags & P::kNx) && (*flags & (P::kXx | P::kGt | P::kLt))) {
    ctx.out.Error(errors::kExpireNxIncompatible);
    return false;
  }
  if ((*flags & P::kGt) && (*flags & P::kLt)) {
    ctx.out.Error(errors::kExpireGtLtIncompatible);
    return false;
  }
  return true;
}

// seconds: EXPIRE/EXPIREAT; absolute: EXPIREAT/PEXPIREAT. name: lowercase command name.
void ExpireGeneric(CommandContext& ctx, bool seconds, bool absolute, std::string_view name) {
  store::ExpireParams p;
  if (!ParseExpireFlags(ctx, &p.flags)) return;
  const ExpiryForm form{.seconds = seconds, .absolute = absolute, .positive_only = false};
  switch (ParseExpiry(ctx.arg(2), form, ctx.now, &p.deadline_ms)) {
    case ExpiryStatus::kOk: break;
    case ExpiryStatus::kNotInteger: return ctx.out.Error(errors::kNotInteger);
    case ExpiryStatus::kInvalid: return InvalidExpire(ctx, name);
  }
  ctx.out.Integer(store::OpExpire(ctx.key(0), p, ctx.env()) == store::OpStatus::kOk ? 1 : 0);
}

void ExpireCommand(CommandContext& ctx) { ExpireGeneric(ctx, true, false, "expire"); }
void PExpireCommand(CommandContext& ctx) { ExpireGeneric(ctx, false, false, "pexpire"); }
void ExpireAtCommand(CommandContext& ctx) { ExpireGeneric(ctx, true, true, "expireat"); }
void PExpireAtCommand(CommandContext& ctx) { ExpireGeneric(ctx, false, true, "pexpireat"); }

// TTL/PTTL (remaining) and EXPIRETIME/PEXPIRETIME (absolute), rounded as Redis does.
void TtlGeneric(CommandContext& ctx, bool in_ms, bool absolute) {
  const KeyRef& k = ctx.key(0);
  store::Object* o = k.shard->Peek(k.key, k.hash, ctx.now.mono_ms);
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
  ctx.out.Integer(store::OpPersist(ctx.key(0), ctx.env()) == store::OpStatus::kOk ? 1 : 0);
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
