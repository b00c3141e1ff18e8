#pragma once
// The dispatcher's one call into ACL: may this session's user run this command with these
// arguments? For a user with +@all ~* &* (the default user unless configured otherwise) the
// answer costs one relaxed load and two compares; the rest lives in acl_gate.cpp, which
// asks acl::CheckCommand (acl/permission.h). Also AUTH's and RESET's side of a session.
#include <span>
#include <string>
#include <string_view>

#include "acl/registry.h"
#include "acl/session_acl.h"
#include "commands/context.h"

namespace latch {
struct CommandSpec;
}  // namespace latch

namespace latch::acl {

// Slow path of Allowed(): refreshes the session's snapshot, checks, counts and logs.
bool AllowedSlow(CommandContext& ctx, const CommandSpec& spec, std::string* error);

// True when the command may run. Otherwise *error is the reply to refuse it with (Redis
// 7.0's NOPERM texts), or empty when the session's user was deleted: the connection is then
// closed without a reply, as Redis closes such clients.
// The fast answer: the session's user is allow-all and its snapshot is current (Dispatch's
// fast path asks this alone, commands/dispatch_fast_path.h).
inline bool AllowsAll(const CommandContext& ctx) {
  const SessionAcl& a = ctx.session.acl;
  return a.unrestricted && a.generation == ctx.server.acl->generation();
}
inline bool Allowed(CommandContext& ctx, const CommandSpec& spec, std::string* error) {
  if (AllowsAll(ctx)) [[likely]]
    return true;
  return AllowedSlow(ctx, spec, error);
}

// redis.call/pcall: the script runs with its caller's user. Returns Redis 7.0's error text
// ("The user executing the script can't run this command or subcommand"), or empty.
std::string_view ScriptDenial(CommandContext& caller, const CommandSpec& spec,
                              std::span<const std::string_view> args);

// AUTH and HELLO AUTH: on success the session becomes `name`'s (CLIENT LIST's user= too).
// A failure is counted (acl_access_denied_auth) and logged.
bool Login(CommandContext& ctx, std::string_view name, std::string_view pass);
// RESET: back to the default user, authenticated only when the default user needs no AUTH.
void ResetToDefault(CommandContext& ctx);

}  // namespace latch::acl
