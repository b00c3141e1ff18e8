// Command, key and channel checks (Redis 7.0's ACLCheckAllUserCommandPerm): pure functions of
// a user, a command's spec and its arguments. The session's side (counting, ACL LOG, AUTH)
// is the dispatcher's, in commands/acl_gate.cpp.
#include "acl/permission.h"

#include "catalogue/command_catalogue.h"
#include "catalogue/command_keys.h"
#include "glob_match.h"

namespace latch::acl {
namespace {

bool KeyAllowed(const User& u, std::string_view key, std::uint8_t need) {
  for (const KeyPattern& p : u.keys) {
    if ((p.perms & need) == need && GlobMatch(p.pattern, key, false)) return true;
  }
  return false;
}

// A channel, or (psubscribe) a pattern, which must equal one of the user's patterns.
bool ChannelAllowed(const User& u, std::string_view channel, bool literal) {
  for (const std::string& p : u.channels) {
    if (literal ? p == channel : GlobMatch(p, channel, false)) return true;
  }
  return false;
}

// The keys a command names (catalogue/command_keys.h), each against the access it needs. A
// count that is not valid names no more keys than the fixed ones: the command itself then
// answers the error, as Redis's ACL check lets it.
Denial CheckKeys(const User& u, const CommandSpec& spec, std::span<const std::string_view> args,
                 std::size_t* pos) {
  std::vector<KeyArg> keys;
  CommandKeys(spec, args, &keys);
  for (const KeyArg& k : keys) {
    const std::uint8_t need = k.access == KeyAccess::kRead    ? kKeyRead
                              : k.access == KeyAccess::kWrite ? kKeyWrite
                                                              : kKeyAll;
    if (!KeyAllowed(u, args[k.pos], need)) {
      *pos = k.pos;
      return Denial::kKey;
    }
  }
  return Denial::kNone;
}

// Pub/sub is another engineer's: PUBLISH/SUBSCRIBE are checked here once they exist.
Denial CheckChannels(const User& u, const CommandSpec& spec, std::span<const std::string_view> args,
                     std::size_t* pos) {
  const std::string_view n = spec.name;
  const bool one = n == "publish" || n == "spublish";
  const bool all = n == "subscribe" || n == "ssubscribe" || n == "psubscribe";
  if (!one && !all) return Denial::kNone;
  for (std::size_t i = 1; i < args.size() && (all || i == 1); ++i) {
    if (!ChannelAllowed(u, args[i], n == "psubscribe")) {
      *pos = i;
      return Denial::kChannel;
    }
  }
  return Denial::kNone;
}

}  // namespace

Denial CheckCommand(const User& user, const CommandIndex::Entry& entry,
                    std::span<const std::string_view> args, std::size_t* pos) {
  if (user.unrestricted) return Denial::kNone;
  // Commands allowed before AUTH (AUTH, HELLO, QUIT, RESET) are allowed to every user.
  if (!(entry.spec->flags & kCmdNoAuth) && !user.Allowed(entry.id)) {
    *pos = 0;
    return Denial::kCommand;
  }
  if (!user.all_keys) {
    if (Denial d = CheckKeys(user, *entry.spec, args, pos); d != Denial::kNone) return d;
  }
  if (!user.all_channels) return CheckChannels(user, *entry.spec, args, pos);
  return Denial::kNone;
}

}  // namespace latch::acl
