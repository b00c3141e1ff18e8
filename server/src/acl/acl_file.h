#pragma once
// Users from text: the `user` directives of latchd.conf and the aclfile (ACL LOAD/SAVE).
// Each line is "user <name> <rule> ..." (the aclfile) or "<name> <rule> ..." (a directive),
// split as Redis splits config lines.
#include <optional>
#include <string>

namespace latch {
struct ServerState;
}  // namespace latch

namespace latch::acl {

class Registry;

// ACL LOAD: replaces every user with the file's, or changes nothing and returns Redis's
// message ("<path>:<line>: <reason>. ...").
std::optional<std::string> LoadAclFile(Registry& reg, const std::string& path);
// ACL SAVE: writes every user (a temporary file renamed over the old one). False on error.
bool SaveAclFile(Registry& reg, const std::string& path);
// At start, after requirepass: the config's `user` lines, then the aclfile. Throws
// std::runtime_error with the reason (latchd does not start with broken users).
void LoadUsersAtStartup(ServerState& state);
// After options.requirepass was set or changed (at start, CONFIG SET; under options_mu or
// before any thread runs): the default user's password follows it, and so does
// state.auth_required.
void ApplyRequirepass(ServerState& state);

}  // namespace latch::acl
