// ScopedServer's Check* helpers: each says what it expected, what it found and, for lists,
// which entries are missing or unexpected, so that a failing test reads as a diff.
#include <algorithm>
#include <sstream>

#include "latch/testing/scoped_server.h"

namespace latch::testing {
namespace {

std::string Quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

std::string List(const std::vector<std::string>& items) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + Quoted(items[i]);
  return out + "]";
}

// Entries of `a` not in `b` (both sorted).
std::vector<std::string> Minus(const std::vector<std::string>& a,
                               const std::vector<std::string>& b) {
  std::vector<std::string> out;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

}  // namespace

CheckResult ScopedServer::CheckGet(std::string_view key, std::string_view expected) {
  const std::optional<std::string> got = Get(key);
  if (got == expected) return CheckResult::Ok();
  return CheckResult::Fail("key " + Quoted(key) + ": expected value " + Quoted(expected) +
                           ", got " + (got ? Quoted(*got) : "no key"));
}

CheckResult ScopedServer::CheckMissing(std::string_view key) {
  const std::optional<std::string> got = Get(key);
  if (!got && !Exists(key)) return CheckResult::Ok();
  return CheckResult::Fail("key " + Quoted(key) + ": expected no key, got " +
                           (got ? "value " + Quoted(*got) : "a key") + " with TTL " +
                           std::to_string(Ttl(key)) + " ms");
}

CheckResult ScopedServer::CheckKeys(std::string_view pattern, std::vector<std::string> expected) {
  std::sort(expected.begin(), expected.end());
  const std::vector<std::string> got = Keys(pattern);
  if (got == expected) return CheckResult::Ok();
  std::ostringstream why;
  why << "keys " << Quoted(pattern) << ": expected " << List(expected) << ", got " << List(got);
  if (auto missing = Minus(expected, got); !missing.empty())
    why << "\n  missing: " << List(missing);
  if (auto extra = Minus(got, expected); !extra.empty()) why << "\n  unexpected: " << List(extra);
  return CheckResult::Fail(why.str());
}

CheckResult ScopedServer::CheckTtl(std::string_view key, Millis expected) {
  const std::int64_t got = Ttl(key);
  if (got == expected.count()) return CheckResult::Ok();
  const std::string shown = got == -2   ? "no key"
                            : got == -1 ? "no TTL"
                                        : std::to_string(got) + " ms";
  return CheckResult::Fail("key " + Quoted(key) + ": expected TTL " +
                           std::to_string(expected.count()) + " ms, got " + shown);
}

CheckResult ScopedServer::CheckLockOwner(std::string_view key, std::string_view owner) {
  const std::optional<LockState> lock = Lock(key);
  if (lock && lock->owner == owner) return CheckResult::Ok();
  if (!lock)
    return CheckResult::Fail("lock " + Quoted(key) + ": expected owner " + Quoted(owner) +
                             ", got no key");
  return CheckResult::Fail("lock " + Quoted(key) + ": expected owner " + Quoted(owner) +
                           ", got owner " + Quoted(lock->owner) + " (ttl " +
                           std::to_string(lock->ttl_ms) + " ms, " + std::to_string(lock->waiters) +
                           " waiting)");
}

}  // namespace latch::testing
