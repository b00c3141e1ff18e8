// The dispatcher's side of ACL: refreshes a session's user when any ACL changed, checks a
// command with acl::CheckCommand (acl/permission.h), counts and logs denials (INFO, ACL LOG),
// and logs a session in or out (AUTH, HELLO AUTH, RESET).
#include "commands/acl_gate.h"

#include <mutex>

#include "acl/permission.h"
#include "catalogue/command_spec.h"
#include "commands/client_list.h"

namespace latch::acl {
namespace {

std::string ClientLine(CommandContext& ctx) {
  std::string line;
  if (ctx.session.info == nullptr) return line;
  std::lock_guard lock(ctx.server.clients.mu);
  AppendClientLine(*ctx.session.info, ctx.now.mono_ms, &line);
  if (!line.empty() && line.back() == '\n') line.pop_back();
  return line;
}

void Record(CommandContext& ctx, Denial d, std::string_view object, std::string_view context) {
  Registry& reg = *ctx.server.acl;
  static constexpr std::string_view kReasons[] = {"", "command", "key", "channel"};
  (d == Denial::kCommand ? reg.denied_cmd
   : d == Denial::kKey   ? reg.denied_key
                         : reg.denied_channel)
      .fetch_add(1, std::memory_order_relaxed);
  reg.log().Add(LogEntry{1, std::string(kReasons[static_cast<int>(d)]), std::string(context),
                         std::string(object), ctx.session.acl.name, 0, ClientLine(ctx)},
                ctx.now.wall_ms);
}

// Re-reads the session's user when any ACL changed; false when the user is gone.
bool Refresh(CommandContext& ctx) {
  SessionAcl& a = ctx.session.acl;
  const std::uint64_t gen = ctx.server.acl->generation();
  if (a.generation != gen || a.user == nullptr) {
    a.user = ctx.server.acl->Find(a.name);
    a.generation = gen;
    a.unrestricted = a.user != nullptr && a.user->unrestricted;
  }
  return a.user != nullptr;
}

}  // namespace

bool AllowedSlow(CommandContext& ctx, const CommandSpec& spec, std::string* error) {
  // A script's redis.call was checked with the caller's user (ScriptDenial).
  if (ctx.origin == CommandOrigin::kScript || !ctx.server.acl->attached()) return true;
  if (!Refresh(ctx)) {
    ctx.session.close_after_reply = true;  // ACL DELUSER of this connection's user
    error->clear();
    return false;
  }
  if (ctx.session.acl.unrestricted) return true;
  const CommandIndex::Entry* entry = ctx.server.acl->index().Of(&spec);
  if (entry == nullptr) return true;  // not in the table (cannot happen: Dispatch found it)
  std::size_t pos = 0;
  const Denial d = CheckCommand(*ctx.session.acl.user, *entry, ctx.args, &pos);
  if (d == Denial::kNone) return true;
  const bool exec = ctx.origin == CommandOrigin::kExec;
  Record(ctx, d, d == Denial::kCommand ? std::string_view(spec.name) : ctx.args[pos],
         exec || ctx.session.in_multi ? "multi" : "toplevel");
  if (exec) {
    *error =
        "NOPERM ACLs rules changed between the moment the transaction was accumulated and the "
        "EXEC call. This command is no longer allowed for the following reason: ";
    error->append(d == Denial::kCommand ? "no permission to execute the command or subcommand"
                  : d == Denial::kKey   ? "no permission to touch the specified keys"
                                        : "no permission to access one of the channels used as "
                                          "arguments");
  } else if (d == Denial::kCommand) {
    *error = "NOPERM this user has no permissions to run the '" + spec.name + "' command";
  } else if (d == Denial::kKey) {
    *error = "NOPERM this user has no permissions to access one of the keys used as arguments";
  } else {
    *error = "NOPERM this user has no permissions to access one of the channels used as arguments";
  }
  return false;
}

std::string_view ScriptDenial(CommandContext& caller, const CommandSpec& spec,
                              std::span<const std::string_view> args) {
  if (caller.session.acl.unrestricted &&
      caller.session.acl.generation == caller.server.acl->generation()) {
    return {};
  }
  if (!caller.server.acl->attached()) return {};
  if (!Refresh(caller)) return "The user executing the script can't run this command or subcommand";
  if (caller.session.acl.unrestricted) return {};
  const CommandIndex::Entry* entry = caller.server.acl->index().Of(&spec);
  if (entry == nullptr) return {};
  std::size_t pos = 0;
  const Denial d = CheckCommand(*caller.session.acl.user, *entry, args, &pos);
  if (d == Denial::kNone) return {};
  Record(caller, d, d == Denial::kCommand ? std::string_view(spec.name) : args[pos], "lua");
  switch (d) {
    case Denial::kCommand:
      return "The user executing the script can't run this command or subcommand";
    case Denial::kKey:
      return "The user executing the script can't access at least one of the keys mentioned in "
             "the command arguments";
    default:
      return "The user executing the script can't publish to the channel mentioned in the "
             "command";
  }
}

bool Login(CommandContext& ctx, std::string_view name, std::string_view pass) {
  std::shared_ptr<const User> u = ctx.server.acl->Authenticate(name, pass);
  if (u == nullptr) {
    ctx.server.acl->denied_auth.fetch_add(1, std::memory_order_relaxed);
    ctx.server.acl->log().Add(
        LogEntry{1, "auth", "toplevel", "AUTH", std::string(name), 0, ClientLine(ctx)},
        ctx.now.wall_ms);
    return false;
  }
  SessionAcl& a = ctx.session.acl;
  a.name = u->name;
  a.generation = ctx.server.acl->generation();
  a.unrestricted = u->unrestricted;
  a.user = std::move(u);
  ctx.session.authenticated = true;
  std::lock_guard lock(ctx.server.clients.mu);
  ctx.session.info->user = a.name;
  return true;
}

void ResetToDefault(CommandContext& ctx) {
  ctx.session.acl = SessionAcl{};
  ctx.session.authenticated = !ctx.server.acl->DefaultNeedsAuth();
  std::lock_guard lock(ctx.server.clients.mu);
  ctx.session.info->user = "default";
}

}  // namespace latch::acl
