// HSET, HSETNX, HMSET, HGET, HMGET, HDEL, HEXISTS, HINCRBY, HINCRBYFLOAT, HLEN, HGETALL,
// HKEYS, HVALS, HSTRLEN: Redis 7.0's hash commands (Redisson's lock scripts use HINCRBY,
// HEXISTS and HGET). The Cmd layer: parsing and replies; writes are store/hash_ops.h.
#include <cmath>
#include <string>

#include "commands/arg_parse.h"
#include "commands/command_table.h"
#include "commands/errors.h"
#include "commands/key_lock.h"
#include "store/container_ops.h"
#include "store/float_text.h"
#include "store/hash_ops.h"

namespace latch {
namespace {

using store::HashValue;
using store::OpStatus;

// The key's hash for a read: false (WRONGTYPE replied) for another type; *h null if missing.
bool ReadHash(CommandContext& ctx, const HashValue** h) {
  store::Object* o;
  HashValue* found;
  if (store::FindContainer(ctx.key(0), ctx.env(), &o, &found) != OpStatus::kOk) {
    ctx.out.Error(errors::kWrongType);
    return false;
  }
  *h = found;
  return true;
}

void HSetGeneric(CommandContext& ctx, bool reply_added) {
  if (ctx.argc() % 2 != 0) {
    return ctx.out.Error("ERR wrong number of arguments for '" +
                         std::string(reply_added ? "hset" : "hmset") + "' command");
  }
  std::int64_t added = 0;
  if (store::OpHSet(ctx.key(0), ctx.args.subspan(2), false, ctx.env(), &added) ==
      OpStatus::kWrongType) {
    return ctx.out.Error(errors::kWrongType);
  }
  if (reply_added) return ctx.out.Integer(added);
  ctx.out.Ok();
}

void HSetCommand(CommandContext& ctx) { HSetGeneric(ctx, true); }
void HMSetCommand(CommandContext& ctx) { HSetGeneric(ctx, false); }

void HSetNxCommand(CommandContext& ctx) {
  std::int64_t added = 0;
  switch (store::OpHSet(ctx.key(0), ctx.args.subspan(2), true, ctx.env(), &added)) {
    case OpStatus::kWrongType: return ctx.out.Error(errors::kWrongType);
    case OpStatus::kOk: return ctx.out.Integer(1);
    default: return ctx.out.Integer(0);
  }
}

void HGetCommand(CommandContext& ctx) {
  const HashValue* h;
  if (!ReadHash(ctx, &h)) return;
  std::string_view v;
  if (h == nullptr || !h->Get(ctx.arg(2), &v)) return ctx.out.Null();
  ctx.out.Bulk(v);
}

void HMGetCommand(CommandContext& ctx) {
  const HashValue* h;
  if (!ReadHash(ctx, &h)) return;
  ctx.out.ArrayHeader(ctx.argc() - 2);
  for (std::size_t i = 2; i < ctx.argc(); ++i) {
    std::string_view v;
    if (h == nullptr || !h->Get(ctx.arg(i), &v)) {
      ctx.out.Null();
    } else {
      ctx.out.Bulk(v);
    }
  }
}

void HDelCommand(CommandContext& ctx) {
  std::int64_t removed = 0;
  if (store::OpHDel(ctx.key(0), ctx.args.subspan(2), ctx.env(), &removed) ==
      OpStatus::kWrongType) {
    return ctx.out.Error(errors::kWrongType);
  }
  ctx.out.Integer(removed);
}

void HExistsCommand(CommandContext& ctx) {
  const HashValue* h;
  if (!ReadHash(ctx, &h)) return;
  ctx.out.Integer(h != nullptr && h->Has(ctx.arg(2)) ? 1 : 0);
}

void HLenCommand(CommandContext& ctx) {
  const HashValue* h;
  if (!ReadHash(ctx, &h)) return;
  ctx.out.Integer(h != nullptr ? static_cast<std::int64_t>(h->size()) : 0);
}

void HStrLenCommand(CommandContext& ctx) {
  const HashValue* h;
  if (!ReadHash(ctx, &h)) return;
  std::string_view v;
  ctx.out.Integer(h != nullptr && h->Get(ctx.arg(2), &v) ? static_cast<std::int64_t>(v.size()) : 0);
}

// HGETALL (a map in RESP3), HKEYS, HVALS.
enum class Part { kBoth, kFields, kValues };
void ReplyAll(CommandContext& ctx, Part part) {
  const HashValue* h;
  if (!ReadHash(ctx, &h)) return;
  const std::size_t n = h != nullptr ? h->size() : 0;
  if (part == Part::kBoth) {
    ctx.out.MapHeader(n);
  } else {
    ctx.out.ArrayHeader(n);
  }
  if (h == nullptr) return;
  h->ForEach([&](std::string_view f, std::string_view v) {
    if (part != Part::kValues) ctx.out.Bulk(f);
    if (part != Part::kFields) ctx.out.Bulk(v);
  });
}

void HGetAllCommand(CommandContext& ctx) { ReplyAll(ctx, Part::kBoth); }
void HKeysCommand(CommandContext& ctx) { ReplyAll(ctx, Part::kFields); }
void HValsCommand(CommandContext& ctx) { ReplyAll(ctx, Part::kValues); }

void HIncrByCommand(CommandContext& ctx) {
  std::int64_t delta = 0;
  if (!ParseInt64(ctx.arg(3), &delta)) return ctx.out.Error(errors::kNotInteger);
  std::int64_t next = 0;
  switch (store::OpHIncrBy(ctx.key(0), ctx.arg(2), delta, ctx.env(), &next)) {
    case OpStatus::kWrongType: return ctx.out.Error(errors::kWrongType);
    case OpStatus::kNotInteger: return ctx.out.Error("ERR hash value is not an integer");
    case OpStatus::kOverflow: return ctx.out.Error(errors::kOverflow);
    default: return ctx.out.Integer(next);
  }
}

void HIncrByFloatCommand(CommandContext& ctx) {
  long double delta = 0;
  if (!store::ParseLongDouble(ctx.arg(3), &delta)) return ctx.out.Error(errors::kNotFloat);
  if (std::isinf(delta)) return ctx.out.Error("ERR value is NaN or Infinity");
  std::string next;
  switch (store::OpHIncrByFloat(ctx.key(0), ctx.arg(2), delta, ctx.env(), &next)) {
    case OpStatus::kWrongType: return ctx.out.Error(errors::kWrongType);
    case OpStatus::kNotFloat: return ctx.out.Error("ERR hash value is not a float");
    case OpStatus::kOverflow: return ctx.out.Error("ERR increment would produce NaN or Infinity");
    default: return ctx.out.Bulk(next);
  }
}

void AddHashCommand(CommandTable& t, const char* name, int arity, std::uint32_t flags,
                    CommandHandler handler, std::string_view summary, std::string_view since) {
  t.Add({.name = name, .arity = arity, .flags = flags, .first_key = 1, .last_key = 1,
         .key_step = 1, .handler = handler, .group = "hash", .summary = summary,
         .since = since});
}

}  // namespace

void RegisterHashCommands(CommandTable& t) {
  const auto w = kCmdWrite | kCmdDenyOom | kCmdFast;
  const auto r = kCmdReadonly | kCmdFast;
  AddHashCommand(t, "hset", -4, w, HSetCommand,
                 "Creates or modifies the value of a field in a hash.", "2.0.0");
  AddHashCommand(t, "hmset", -4, w, HMSetCommand, "Sets the values of multiple fields.", "2.0.0");
  AddHashCommand(t, "hsetnx", 4, w, HSetNxCommand,
                 "Sets the value of a field in a hash only when the field doesn't exist.", "2.0.0");
  AddHashCommand(t, "hget", 3, r, HGetCommand, "Returns the value of a field in a hash.", "2.0.0");
  AddHashCommand(t, "hmget", -3, r, HMGetCommand, "Returns the values of all fields in a hash.",
                 "2.0.0");
  AddHashCommand(
      t, "hdel", -3, kCmdWrite | kCmdFast, HDelCommand,
      "Deletes one or more fields and their values from a hash. Deletes the hash if no fields "
      "remain.",
      "2.0.0");
  AddHashCommand(t, "hexists", 3, r, HExistsCommand, "Determines whether a field exists in a hash.",
                 "2.0.0");
  AddHashCommand(t, "hlen", 2, r, HLenCommand, "Returns the number of fields in a hash.", "2.0.0");
  AddHashCommand(t, "hstrlen", 3, r, HStrLenCommand, "Returns the length of the value of a field.",
                 "3.2.0");
  AddHashCommand(t, "hgetall", 2, kCmdReadonly, HGetAllCommand,
                 "Returns all fields and values in a hash.", "2.0.0");
  AddHashCommand(t, "hkeys", 2, kCmdReadonly, HKeysCommand, "Returns all fields in a hash.",
                 "2.0.0");
  AddHashCommand(t, "hvals", 2, kCmdReadonly, HValsCommand, "Returns all values in a hash.",
                 "2.0.0");
  AddHashCommand(
      t, "hincrby", 4, w, HIncrByCommand,
      "Increments the integer value of a field in a hash by a number. Uses 0 as initial value "
      "if the field doesn't exist.",
      "2.0.0");
  AddHashCommand(
      t, "hincrbyfloat", 4, w, HIncrByFloatCommand,
      "Increments the floating point value of a field by a number. Uses 0 as initial value if "
      "the field doesn't exist.",
      "2.6.0");
}

}  // namespace latch
