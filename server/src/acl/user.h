#pragma once
// One ACL user as Redis 7.0 defines it: flags, password digests, the commands it may run (one
// bit per command id of the CommandIndex), key patterns with read/write permissions and
// channel patterns. Users are values: the registry publishes an immutable copy after each
// change, so a worker checks a command against a snapshot with no lock.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "acl/command_index.h"

namespace latch::acl {

inline constexpr std::uint8_t kKeyRead = 1, kKeyWrite = 2, kKeyAll = 3;

struct KeyPattern {
  std::string pattern;
  std::uint8_t perms = kKeyAll;
  bool operator==(const KeyPattern&) const = default;
};

struct User {
  std::string name;
  bool enabled = false;  // a new user is "off"
  bool nopass = false;
  enum class Sanitize : std::uint8_t { kUnset, kSanitize, kSkip } sanitize = Sanitize::kUnset;
  std::vector<std::string> passwords;  // SHA-256 hex digests, in the order added
  std::vector<std::uint64_t> allowed;  // bit per CommandIndex id
  bool all_commands = false;           // +@all with nothing taken away since
  // Set by +@all, cleared only by -@all (Redis's reserved "future commands" bit): ACL LIST
  // starts from +@all and subtracts while it is set, even after "-del".
  bool future_commands = false;
  bool all_keys = false;
  std::vector<KeyPattern> keys;
  bool all_channels = false;
  std::vector<std::string> channels;
  // Precomputed for the dispatcher: may run anything on any key and channel.
  bool unrestricted = false;

  bool Allowed(std::uint32_t id) const {
    return id / 64 < allowed.size() && (allowed[id / 64] >> (id % 64) & 1);
  }
  void Refresh() { unrestricted = all_commands && all_keys && all_channels; }
};

// Applies one ACL SETUSER rule. Returns the reason Redis gives when it is refused ("Syntax
// error", "Unknown command or category name in ACL", ...); then `u` may be half changed, so
// callers apply rules to a copy.
std::optional<std::string_view> ApplyRule(User& u, std::string_view rule, const CommandIndex& idx);
// A new user with Redis's defaults for `name` ("off", no passwords, keys or commands).
User NewUser(std::string name, const CommandIndex& idx);
// The rule text that rebuilds the user (ACL LIST, ACL SAVE): flags, #digests, keys,
// channels, then the command rules, as Redis words them.
std::string DescribeUser(const User& u, const CommandIndex& idx);
// The command part alone (ACL GETUSER's "commands"): "+@all", "-@all +get", ...
std::string DescribeCommands(const User& u, const CommandIndex& idx);
// The key patterns ("~a %R~b"), channel patterns ("&c") with spaces between.
std::string DescribeKeys(const User& u);
std::string DescribeChannels(const User& u);
// Checks a password against the user's digests without an early exit on mismatch.
bool PasswordMatches(const User& u, std::string_view pass);

}  // namespace latch::acl
