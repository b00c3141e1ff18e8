#pragma once
// Runs a recognised library lock script (native_scripts.h) as C++ on the store's Op layer,
// locking only the shards of its keys: no interpreter, no keyspace freeze. The reply is the
// one the Lua script would give, byte for byte (proved by script_native_diff_test).
#include <span>
#include <string_view>

#include "commands/context.h"
#include "scripting/native_scripts.h"

namespace latch::scripting {

// Writes the reply to ctx.out and returns true; or returns false, having written and
// changed nothing, when the call is outside the fast path's assumptions (a missing or
// non-integer TTL argument, a TTL that would delete the key, a missing KEYS[1] or ARGV
// entry...): the caller then runs the script in Lua, which gives the exact Redis answer.
bool RunNative(NativeKind kind, CommandContext& ctx, std::span<const std::string_view> keys,
               std::span<const std::string_view> argv);

}  // namespace latch::scripting
