// SETBIT and GETBIT: Redis 7.0's offset rules (a bit offset whose byte would reach
// proto-max-bulk-len is refused) and error texts. The write is store/bit_ops.h.
#include <cstdint>
#include <string_view>

#include "commands/arg_parse.h"
#include "commands/command_table.h"
#include "commands/errors.h"
#include "store/bit_ops.h"

namespace latch {
namespace {

constexpr std::string_view kBadOffset = "ERR bit offset is not an integer or out of range";

// The bit offset argument, or false after the error reply.
bool ParseBitOffset(CommandContext& ctx, std::string_view arg, std::uint64_t* bit) {
  std::int64_t v = 0;
  const std::int64_t max_bytes = ctx.server.proto_max_bulk_len.load(std::memory_order_relaxed);
  if (!ParseInt64(arg, &v) || v < 0 || (v >> 3) >= max_bytes) {
    ctx.out.Error(kBadOffset);
    return false;
  }
  *bit = static_cast<std::uint64_t>(v);
  return true;
}

void SetBitCommand(CommandContext& ctx) {
  std::uint64_t bit = 0;
  if (!ParseBitOffset(ctx, ctx.arg(2), &bit)) return;
  std::int64_t on = 0;
  if (!ParseInt64(ctx.arg(3), &on) || (on & ~1) != 0) {
    return ctx.out.Error("ERR bit is not an integer or out of range");
  }
  int old = 0;
  if (store::OpSetBit(ctx.key(0), bit, on != 0, ctx.env(), &old) == store::OpStatus::kWrongType) {
    return ctx.out.Error(errors::kWrongType);
  }
  ctx.out.Integer(old);
}

void GetBitCommand(CommandContext& ctx) {
  std::uint64_t bit = 0;
  if (!ParseBitOffset(ctx, ctx.arg(2), &bit)) return;
  const store::KeyRef& k = ctx.key(0);
  const store::Object* o = k.shard->Find(k.key, k.hash, ctx.now.mono_ms);
  if (o == nullptr) return ctx.out.Integer(0);
  if (o->is_container()) return ctx.out.Error(errors::kWrongType);
  const std::string_view v = o->value();
  const std::uint64_t byte = bit >> 3;
  if (byte >= v.size()) return ctx.out.Integer(0);
  const auto c = static_cast<unsigned char>(v[byte]);
  ctx.out.Integer((c >> (7 - (bit & 7))) & 1);
}

}  // namespace

void RegisterBitCommands(CommandTable& t) {
  t.Add({.name = "setbit",
         .arity = 4,
         .flags = kCmdWrite | kCmdDenyOom,
         .first_key = 1,
         .last_key = 1,
         .key_step = 1,
         .handler = SetBitCommand,
         .group = "bitmap",
         .summary = "Sets or clears the bit at offset of the string value. Creates the key if "
                    "it doesn't exist.",
         .since = "2.2.0"});
  t.Add({.name = "getbit",
         .arity = 3,
         .flags = kCmdReadonly | kCmdFast,
         .first_key = 1,
         .last_key = 1,
         .key_step = 1,
         .handler = GetBitCommand,
         .group = "bitmap",
         .summary = "Returns a bit value by offset.",
         .since = "2.2.0"});
}

}  // namespace latch
