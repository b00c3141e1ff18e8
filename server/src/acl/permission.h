#pragma once
// May this user run this command line? The check itself, with no session: the dispatcher
// asks it through commands/acl_gate.h, ACL DRYRUN directly.
#include <span>
#include <string>
#include <string_view>

#include "acl/command_index.h"
#include "acl/user.h"

namespace latch {
struct CommandSpec;
}  // namespace latch

namespace latch::acl {

enum class Denial : std::uint8_t { kNone, kCommand, kKey, kChannel };

// Checks `args` (the command line, name first) against `user`; *pos is the argument index
// of the key or channel refused.
Denial CheckCommand(const User& user, const CommandIndex::Entry& entry,
                    std::span<const std::string_view> args, std::size_t* pos);

}  // namespace latch::acl
