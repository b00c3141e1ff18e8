#include "scripting/native_scripts.h"

#include <string>
#include <unordered_map>

#include "scripting/script_text.h"
#include "scripting/sha1.h"

namespace latch::scripting {
namespace {

// The exact texts, copied from the library packages (whitespace matters for the SHA1 match;
// the canonical match also covers re-indented copies).
constexpr KnownScript kKnown[] = {
    {"redis-py 4.x/5.x Lock.LUA_RELEASE_SCRIPT", NativeKind::kRedisPyRelease,
     R"lua(
        local token = redis.call('get', KEYS[1])
        if not token or token ~= ARGV[1] then
            return 0
        end
        redis.call('del', KEYS[1])
        return 1
    )lua"},
    {"redis-py 4.x/5.x Lock.LUA_EXTEND_SCRIPT", NativeKind::kRedisPyExtend,
     R"lua(
        local token = redis.call('get', KEYS[1])
        if not token or token ~= ARGV[1] then
            return 0
        end
        local expiration = redis.call('pttl', KEYS[1])
        if not expiration then
            expiration = 0
        end
        if expiration < 0 then
            return 0
        end

        local newttl = ARGV[2]
        if ARGV[3] == "0" then
            newttl = ARGV[2] + expiration
        end
        redis.call('pexpire', KEYS[1], newttl)
        return 1
    )lua"},
    {"redis-py 4.x/5.x Lock.LUA_REACQUIRE_SCRIPT", NativeKind::kRedisPyReacquire,
     R"lua(
        local token = redis.call('get', KEYS[1])
        if not token or token ~= ARGV[1] then
            return 0
        end
        redis.call('pexpire', KEYS[1], ARGV[2])
        return 1
    )lua"},
    {"redsync v4 deleteScript", NativeKind::kRedsyncDelete,
     R"lua(
	local val = redis.call("GET", KEYS[1])
	if val == ARGV[1] then
		return redis.call("DEL", KEYS[1])
	elseif val == false then
		return -1
	else
		return 0
	end
)lua"},
    {"redsync v4 (before v4.8) deleteScript", NativeKind::kCompareAndDelete,
     R"lua(
	if redis.call("GET", KEYS[1]) == ARGV[1] then
		return redis.call("DEL", KEYS[1])
	else
		return 0
	end
)lua"},
    {"redsync v4 touchScript", NativeKind::kCompareAndPExpire,
     R"lua(
	if redis.call("GET", KEYS[1]) == ARGV[1] then
		return redis.call("PEXPIRE", KEYS[1], ARGV[2])
	else
		return 0
	end
)lua"},
    {"redsync v4 touchWithSetNXScript", NativeKind::kRedsyncTouchWithSetNx,
     R"lua(
	if redis.call("GET", KEYS[1]) == ARGV[1] then
		return redis.call("PEXPIRE", KEYS[1], ARGV[2])
	elseif redis.call("SET", KEYS[1], ARGV[1], "PX", ARGV[2], "NX") then
		return 1
	else
		return 0
	end
)lua"},
    {"node-redlock v5 ACQUIRE_SCRIPT", NativeKind::kRedlockAcquire,
     R"lua(
  -- Return 0 if an entry already exists.
  for i, key in ipairs(KEYS) do
    if redis.call("exists", key) == 1 then
      return 0
    end
  end

  -- Create an entry for each provided key.
  for i, key in ipairs(KEYS) do
    redis.call("set", key, ARGV[1], "PX", ARGV[2])
  end

  -- Return the number of entries added.
  return #KEYS
)lua"},
    {"node-redlock v5 EXTEND_SCRIPT", NativeKind::kRedlockExtend,
     R"lua(
  -- Return 0 if an entry exists with a *different* lock value.
  for i, key in ipairs(KEYS) do
    if redis.call("get", key) ~= ARGV[1] then
      return 0
    end
  end

  -- Update the entry for each provided key.
  for i, key in ipairs(KEYS) do
    redis.call("set", key, ARGV[1], "PX", ARGV[2])
  end

  -- Return the number of entries updated.
  return #KEYS
)lua"},
    {"node-redlock v5 RELEASE_SCRIPT", NativeKind::kRedlockRelease,
     R"lua(
  local count = 0
  for i, key in ipairs(KEYS) do
    -- Only remove entries for *this* lock value.
    if redis.call("get", key) == ARGV[1] then
      redis.pcall("del", key)
      count = count + 1
    end
  end

  -- Return the number of entries removed.
  return count
)lua"},
    {"@upstash/lock 0.2 release", NativeKind::kCompareAndDelete,
     R"lua(
      -- Check if the current UUID still holds the lock
      if redis.call("get", KEYS[1]) == ARGV[1] then
        return redis.call("del", KEYS[1])
      else
        return 0
      end
     )lua"},
    {"@upstash/lock 0.2 extend", NativeKind::kUpstashExtend,
     R"lua(
      -- Check if the current UUID still holds the lock
      if redis.call("get", KEYS[1]) ~= ARGV[1] then
        return 0
      end

      -- Get the current TTL and extend it by the specified amount
      local ttl = redis.call("ttl", KEYS[1])
      if ttl > 0 then
        return redis.call("expire", KEYS[1], ttl + ARGV[2])
      else
        return 0
      end
     )lua"},
    {"Redis documentation unlock script (one line)", NativeKind::kCompareAndDelete,
     R"lua(if redis.call("get",KEYS[1]) == ARGV[1] then return redis.call("del",KEYS[1]) else return 0 end)lua"},
    {"Redis documentation unlock script (multi-line)", NativeKind::kCompareAndDelete,
     R"lua(if redis.call("get",KEYS[1]) == ARGV[1] then
    return redis.call("del",KEYS[1])
else
    return 0
end)lua"},
};

// Like CanonicalWhitespace, but a run of whitespace that holds a line break becomes "\n":
// where a script has "--" comments, line breaks decide what is code.
std::string LineCanonical(std::string_view body) {
  std::string out;
  char pending = 0;
  for (char c : body) {
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f') {
      if (!out.empty()) pending = (c == '\n' || pending == '\n') ? '\n' : ' ';
      continue;
    }
    if (pending != 0) out.push_back(pending);
    pending = 0;
    out.push_back(c);
  }
  return out;
}

struct CanonicalEntry {
  NativeKind kind;
  std::string lines;  // LineCanonical of the known text when it has comments, else empty
};

// Built once, read-only afterwards: SHA1 -> kind and canonical text -> kind.
struct Index {
  std::unordered_map<std::string, NativeKind> by_sha;
  std::unordered_map<std::string, CanonicalEntry> by_canonical;
  Index() {
    for (const KnownScript& s : kKnown) {
      by_sha.emplace(Sha1Hex(s.body), s.kind);
      bool comments = s.body.find("--") != std::string_view::npos;
      by_canonical.emplace(CanonicalWhitespace(s.body),
                           CanonicalEntry{s.kind, comments ? LineCanonical(s.body) : ""});
    }
  }
};

const Index& TheIndex() {
  static const Index index;
  return index;
}

}  // namespace

NativeKind RecogniseScript(std::string_view body, std::string_view sha) {
  const Index& index = TheIndex();
  if (auto it = index.by_sha.find(std::string(sha)); it != index.by_sha.end()) return it->second;
  auto it = index.by_canonical.find(CanonicalWhitespace(body));
  if (it == index.by_canonical.end()) return NativeKind::kNone;
  if (!it->second.lines.empty() && LineCanonical(body) != it->second.lines) {
    return NativeKind::kNone;
  }
  return it->second.kind;
}

std::span<const KnownScript> KnownScripts() { return kKnown; }

}  // namespace latch::scripting
