// SETEX, PSETEX, GETSET, GETEX, APPEND, STRLEN, GETRANGE, SETRANGE: the rest of Redis 7.0's
// string commands. The Cmd layer only: writes are store/string_ops.h (SET, GET of SET),
// store/string_edit_ops.h (APPEND, SETRANGE) and store/key_ops.h (GETEX's TTL changes).
#include <string>

#include "commands/arg_parse.h"
#include "commands/command_table.h"
#include "commands/errors.h"
#include "commands/expiry_arg.h"
#include "commands/key_lock.h"
#include "store/key_ops.h"
#include "store/string_edit_ops.h"
#include "store/float_text.h"
#include "store/string_ops.h"

namespace latch {
namespace {

using store::OpStatus;

constexpr std::string_view kTooLong =
    "ERR string exceeds maximum allowed size (proto-max-bulk-len)";

std::size_t MaxLen(const CommandContext& ctx) {
  return static_cast<std::size_t>(ctx.server.proto_max_bulk_len.load(std::memory_order_relaxed));
}

// The key's string for a read: false (WRONGTYPE replied) for another type; *o null if missing.
bool ReadString(CommandContext& ctx, const store::Object** o) {
  const KeyRef& k = ctx.key(0);
  *o = k.shard->Find(k.key, k.hash, ctx.now.mono_ms);
  if (*o != nullptr && (*o)->is_container()) {
    ctx.out.Error(errors::kWrongType);
    return false;
  }
  return true;
}

// SETEX key seconds value / PSETEX key milliseconds value.
void SetExGeneric(CommandContext& ctx, bool seconds, std::string_view name) {
  std::int64_t deadline = 0;
  switch (ParseExpiry(ctx.arg(2), ExpiryForm{.seconds = seconds, .positive_only = true}, ctx.now,
                      &deadline)) {
    case ExpiryStatus::kNotInteger: return ctx.out.Error(errors::kNotInteger);
    case ExpiryStatus::kInvalid:
      return ctx.out.Error("ERR invalid expire time in '" + std::string(name) + "' command");
    case ExpiryStatus::kOk: break;
  }
  store::SetParams p;
  p.expiry = store::Expiry::At(deadline);
  store::OpSet(ctx.key(0), ctx.arg(3), p, ctx.env(), nullptr);
  ctx.out.Ok();
}

void SetExCommand(CommandContext& ctx) { SetExGeneric(ctx, true, "setex"); }
void PSetExCommand(CommandContext& ctx) { SetExGeneric(ctx, false, "psetex"); }

void GetSetCommand(CommandContext& ctx) {
  store::SetParams p;
  p.get = true;
  store::SetResult r;
  if (store::OpSet(ctx.key(0), ctx.arg(2), p, ctx.env(), &r) == OpStatus::kWrongType) {
    return ctx.out.Error(errors::kWrongType);
  }
  if (!r.had_old) return ctx.out.Null();
  ctx.out.Bulk(r.old);
}

// GETEX's options (SET's rules: one kind of expiry, repeatable, or PERSIST). Returns false
// after replying a syntax error; *kind is 0 when no expiry option was given.
bool ParseGetExOptions(CommandContext& ctx, std::uint64_t* kind_out, std::string_view* arg_out,
                       bool* persist) {
  std::uint64_t kind = 0;
  std::string_view arg;
  for (std::size_t j = 2; j < ctx.argc(); ++j) {
    const std::uint64_t w = FoldWord(ctx.arg(j));
    const bool has_next = j + 1 < ctx.argc();
    if (w == Word("persist") && kind == 0) {
      *persist = true;
    } else if ((w == Word("ex") || w == Word("px") || w == Word("exat") || w == Word("pxat")) &&
               has_next && !*persist && (kind == 0 || kind == w)) {
      kind = w;
      arg = ctx.arg(++j);
    } else {
      ctx.out.Error(errors::kSyntax);
      return false;
    }
  }
  *kind_out = kind;
  *arg_out = arg;
  return true;
}

// The deadline of GETEX's expiry option (Redis checks it after the key's lookup and type).
bool ParseGetExDeadline(CommandContext& ctx, std::uint64_t kind, std::string_view arg,
                        std::int64_t* deadline) {
  ExpiryForm form{.positive_only = true};
  form.seconds = kind == Word("ex") || kind == Word("exat");
  form.absolute = kind == Word("exat") || kind == Word("pxat");
  switch (ParseExpiry(arg, form, ctx.now, deadline)) {
    case ExpiryStatus::kNotInteger: ctx.out.Error(errors::kNotInteger); return false;
    case ExpiryStatus::kInvalid:
      ctx.out.Error("ERR invalid expire time in 'getex' command");
      return false;
    case ExpiryStatus::kOk: return true;
  }
  return false;
}

void GetExCommand(CommandContext& ctx) {
  std::uint64_t kind = 0;
  std::string_view arg;
  bool persist = false;
  if (!ParseGetExOptions(ctx, &kind, &arg, &persist)) return;
  const store::Object* o;
  if (!ReadString(ctx, &o)) return;
  if (o == nullptr) return ctx.out.Null();
  std::int64_t deadline = 0;
  if (kind != 0 && !ParseGetExDeadline(ctx, kind, arg, &deadline)) return;
  ctx.out.Bulk(o->value());  // written before the TTL change may free the value
  if (deadline != 0) {
    store::OpExpire(ctx.key(0), store::ExpireParams{.deadline_ms = deadline}, ctx.env());
  } else if (persist) {
    store::OpPersist(ctx.key(0), ctx.env());
  }
}

void AppendCommand(CommandContext& ctx) {
  std::int64_t len = 0;
  switch (store::OpAppend(ctx.key(0), ctx.arg(2), MaxLen(ctx), ctx.env(), &len)) {
    case OpStatus::kWrongType: return ctx.out.Error(errors::kWrongType);
    case OpStatus::kOverflow: return ctx.out.Error(kTooLong);
    default: return ctx.out.Integer(len);
  }
}

void IncrByFloatCommand(CommandContext& ctx) {
  const store::Object* o;
  if (!ReadString(ctx, &o)) return;  // WRONGTYPE before the increment is read, as Redis
  long double delta = 0;
  long double cur = 0;
  if ((o != nullptr && !store::ParseLongDouble(o->value(), &cur)) ||
      !store::ParseLongDouble(ctx.arg(2), &delta)) {
    return ctx.out.Error(errors::kNotFloat);
  }
  std::string next;
  switch (store::OpIncrByFloat(ctx.key(0), delta, ctx.env(), &next)) {
    case OpStatus::kWrongType: return ctx.out.Error(errors::kWrongType);
    case OpStatus::kNotFloat: return ctx.out.Error(errors::kNotFloat);
    case OpStatus::kOverflow: return ctx.out.Error("ERR increment would produce NaN or Infinity");
    default: return ctx.out.Bulk(next);
  }
}

void StrLenCommand(CommandContext& ctx) {
  const store::Object* o;
  if (!ReadString(ctx, &o)) return;
  ctx.out.Integer(o != nullptr ? static_cast<std::int64_t>(o->value().size()) : 0);
}

void GetRangeCommand(CommandContext& ctx) {
  std::int64_t start, end;
  if (!ParseInt64(ctx.arg(2), &start) || !ParseInt64(ctx.arg(3), &end)) {
    return ctx.out.Error(errors::kNotInteger);
  }
  const store::Object* o;
  if (!ReadString(ctx, &o)) return;
  const std::string_view v = o != nullptr ? o->value() : std::string_view();
  const auto len = static_cast<std::int64_t>(v.size());
  if (start < 0 && end < 0 && start > end) return ctx.out.Bulk("");
  if (start < 0) start = len + start;
  if (end < 0) end = len + end;
  if (start < 0) start = 0;
  if (end < 0) end = 0;
  if (end >= len) end = len - 1;
  if (start > end || len == 0) return ctx.out.Bulk("");
  ctx.out.Bulk(v.substr(static_cast<std::size_t>(start), static_cast<std::size_t>(end - start + 1)));
}

void SetRangeCommand(CommandContext& ctx) {
  std::int64_t offset;
  if (!ParseInt64(ctx.arg(2), &offset)) return ctx.out.Error(errors::kNotInteger);
  if (offset < 0) return ctx.out.Error("ERR offset is out of range");
  std::int64_t len = 0;
  switch (store::OpSetRange(ctx.key(0), static_cast<std::size_t>(offset), ctx.arg(3), MaxLen(ctx),
                            ctx.env(), &len)) {
    case OpStatus::kWrongType: return ctx.out.Error(errors::kWrongType);
    case OpStatus::kOverflow: return ctx.out.Error(kTooLong);
    default: return ctx.out.Integer(len);
  }
}

void AddStringEditCommand(CommandTable& t, const char* name, int arity, std::uint32_t flags,
                          CommandHandler handler, std::string_view summary,
                          std::string_view since) {
  t.Add({.name = name, .arity = arity, .flags = flags, .first_key = 1, .last_key = 1,
         .key_step = 1, .handler = handler, .group = "string", .summary = summary,
         .since = since});
}

}  // namespace

void RegisterStringEditCommands(CommandTable& t) {
  const auto w = kCmdWrite | kCmdDenyOom;
  const auto r = kCmdReadonly;
  AddStringEditCommand(
      t, "setex", 4, w, SetExCommand,
      "Sets the string value and expiration time of a key. Creates the key if it doesn't "
      "exist.",
      "2.0.0");
  AddStringEditCommand(
      t, "psetex", 4, w, PSetExCommand,
      "Sets both string value and expiration time in milliseconds of a key. The key is created "
      "if it doesn't exist.",
      "2.6.0");
  AddStringEditCommand(
      t, "getset", 3, w | kCmdFast, GetSetCommand,
      "Returns the previous string value of a key after setting it to a new value.", "1.0.0");
  AddStringEditCommand(t, "getex", -2, kCmdWrite | kCmdFast, GetExCommand,
                       "Returns the string value of a key after setting its expiration time.",
                       "6.2.0");
  AddStringEditCommand(
      t, "append", 3, w | kCmdFast, AppendCommand,
      "Appends a string to the value of a key. Creates the key if it doesn't exist.", "2.0.0");
  AddStringEditCommand(
      t, "incrbyfloat", 3, w | kCmdFast, IncrByFloatCommand,
      "Increment the floating point value of a key by a number. Uses 0 as initial value if the "
      "key doesn't exist.",
      "2.6.0");
  AddStringEditCommand(t, "strlen", 2, r | kCmdFast, StrLenCommand,
                       "Returns the length of a string value.", "2.2.0");
  AddStringEditCommand(t, "getrange", 4, r, GetRangeCommand,
                       "Returns a substring of the string stored at a key.", "2.4.0");
  AddStringEditCommand(
      t, "setrange", 4, w, SetRangeCommand,
      "Overwrites a part of a string value with another by an offset. Creates the key if it "
      "doesn't exist.",
      "2.2.0");
}

}  // namespace latch
