#pragma once
// Recognition of the lock scripts of popular client libraries, which then run as native
// code (native_runner.h) instead of in Lua. A body is recognised by the SHA1 of its exact
// text or, failing that, by its text with whitespace canonicalised (CanonicalWhitespace), so
// a re-indented copy of a library's script is recognised too. Anything else runs in Lua.
#include <cstdint>
#include <span>
#include <string_view>

namespace latch::scripting {

// What a recognised script does. Several libraries share one behaviour.
enum class NativeKind : std::uint8_t {
  kNone,
  // GET == ARGV[1] ? DEL (reply 1) : 0. Redis docs unlock, @upstash/lock release, redsync
  // before v4.8.
  kCompareAndDelete,
  // redsync v4 deleteScript: like kCompareAndDelete but -1 when the key is missing.
  kRedsyncDelete,
  // redsync v4 touchScript: GET == ARGV[1] ? PEXPIRE ARGV[2] : 0.
  kCompareAndPExpire,
  // redsync v4 touchWithSetNXScript: as above, else SET NX PX ARGV[2] -> 1, else 0.
  kRedsyncTouchWithSetNx,
  kRedisPyRelease,    // redis-py Lock: 0 | DEL and 1
  kRedisPyExtend,     // redis-py Lock: PTTL-relative (ARGV[3] == "0") or absolute PEXPIRE
  kRedisPyReacquire,  // redis-py Lock: PEXPIRE ARGV[2]
  kRedlockAcquire,    // node-redlock v5: every key free -> SET PX on all, #KEYS
  kRedlockExtend,     // node-redlock v5: every key ours -> SET PX on all, #KEYS
  kRedlockRelease,    // node-redlock v5: DEL each key that is ours, count
  kUpstashExtend,     // @upstash/lock: TTL > 0 -> EXPIRE TTL + ARGV[2]
};

// `sha` is the body's SHA1 (lowercase hex).
NativeKind RecogniseScript(std::string_view body, std::string_view sha);

struct KnownScript {
  std::string_view library;  // "redis-py 4.x/5.x Lock.LUA_RELEASE_SCRIPT", ...
  NativeKind kind;
  std::string_view body;  // the exact text the library sends
};
// Every library text recognised, for tests and documentation.
std::span<const KnownScript> KnownScripts();

}  // namespace latch::scripting
