// ACL SETUSER/GETUSER/DELUSER/LIST/USERS/WHOAMI/CAT/LOG/SAVE/LOAD/GENPASS/DRYRUN/HELP, with
// Redis 7.0's replies and error texts. The rules themselves live in acl/.
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "acl/acl_file.h"
#include "acl/permission.h"
#include "acl/registry.h"
#include "commands/arg_parse.h"
#include "commands/command_table.h"
#include "commands/errors.h"
#include "commands/subcommand.h"
#include "latch/protocol/error_arg.h"

namespace latch {
namespace {

acl::Registry& Acl(CommandContext& ctx) { return *ctx.server.acl; }

// After a change that may touch the default user: whether new connections must AUTH.
void SyncAuthRequired(CommandContext& ctx) {
  ctx.server.auth_required = Acl(ctx).DefaultNeedsAuth();
}

void SetUserCommand(CommandContext& ctx) {
  std::vector<std::string_view> rules(ctx.args.begin() + 3, ctx.args.end());
  if (std::optional<std::string> error = Acl(ctx).SetUser(ctx.arg(2), rules)) {
    return ctx.out.Error(*error);
  }
  SyncAuthRequired(ctx);
  ctx.out.Ok();
}

void GetUserCommand(CommandContext& ctx) {
  std::shared_ptr<const acl::User> u = Acl(ctx).Find(ctx.arg(2));
  if (u == nullptr) return ctx.out.Null();
  std::vector<std::string_view> flags;
  flags.push_back(u->enabled ? "on" : "off");
  if (u->nopass) flags.push_back("nopass");
  if (u->sanitize == acl::User::Sanitize::kSkip) flags.push_back("skip-sanitize-payload");
  if (u->sanitize == acl::User::Sanitize::kSanitize) flags.push_back("sanitize-payload");
  ctx.out.MapHeader(6);
  ctx.out.Bulk("flags");
  ctx.out.SetHeader(flags.size());
  for (auto f : flags) ctx.out.Bulk(f);
  ctx.out.Bulk("passwords");
  ctx.out.ArrayHeader(u->passwords.size());
  for (const auto& p : u->passwords) ctx.out.Bulk(p);
  ctx.out.Bulk("commands");
  ctx.out.Bulk(acl::DescribeCommands(*u, Acl(ctx).index()));
  ctx.out.Bulk("keys");
  ctx.out.Bulk(acl::DescribeKeys(*u));
  ctx.out.Bulk("channels");
  ctx.out.Bulk(acl::DescribeChannels(*u));
  ctx.out.Bulk("selectors");
  ctx.out.ArrayHeader(0);
}

// Redis checks every name before deleting any. Connections of a deleted user are closed at
// their next command (acl::Allowed), this one after its reply.
void DelUserCommand(CommandContext& ctx) {
  std::vector<std::string_view> names(ctx.args.begin() + 2, ctx.args.end());
  for (std::string_view n : names) {
    if (n == "default") return ctx.out.Error("ERR The 'default' user cannot be removed");
  }
  const int deleted = Acl(ctx).DelUsers(names);
  ctx.out.Integer(deleted);
}

void ListCommand(CommandContext& ctx) {
  auto users = Acl(ctx).Users();
  ctx.out.ArrayHeader(users.size());
  for (const auto& u : users) {
    ctx.out.Bulk("user " + u->name + " " + acl::DescribeUser(*u, Acl(ctx).index()));
  }
}

void UsersCommand(CommandContext& ctx) {
  auto users = Acl(ctx).Users();
  ctx.out.ArrayHeader(users.size());
  for (const auto& u : users) ctx.out.Bulk(u->name);
}

void WhoAmICommand(CommandContext& ctx) { ctx.out.Bulk(ctx.session.acl.name); }

void CatCommand(CommandContext& ctx) {
  const auto names = acl::CategoryNames();
  if (ctx.argc() == 2) {
    ctx.out.ArrayHeader(names.size());
    for (auto n : names) ctx.out.Bulk(n);
    return;
  }
  if (ctx.argc() > 3) return ctx.out.Error("ERR wrong number of arguments for 'acl|cat' command");
  const std::uint32_t cat = acl::CategoryByName(ctx.arg(2));
  if (cat == 0) {
    return ctx.out.Error("ERR Unknown category '" +
                         std::string(protocol::ErrorArg(ctx.arg(2)).substr(0, 128)) + "'");
  }
  std::vector<std::string_view> cmds;
  for (const auto& e : Acl(ctx).index().entries()) {
    if (e.categories & cat) cmds.push_back(e.spec->name);
  }
  ctx.out.ArrayHeader(cmds.size());
  for (auto c : cmds) ctx.out.Bulk(c);
}

void LogCommand(CommandContext& ctx) {
  std::int64_t count = 10;
  if (ctx.argc() == 3) {
    if (EqualsNoCase(ctx.arg(2), "reset")) {
      Acl(ctx).log().Reset();
      return ctx.out.Ok();
    }
    if (!ParseInt64(ctx.arg(2), &count)) return ctx.out.Error(errors::kNotInteger);
    if (count < 0) count = 0;
  } else if (ctx.argc() > 3) {
    return ctx.out.Error("ERR wrong number of arguments for 'acl|log' command");
  }
  const auto entries = Acl(ctx).log().Newest(static_cast<std::size_t>(count));
  ctx.out.ArrayHeader(entries.size());
  for (const acl::LogEntry& e : entries) {
    ctx.out.MapHeader(7);
    ctx.out.Bulk("count");
    ctx.out.Integer(static_cast<std::int64_t>(e.count));
    ctx.out.Bulk("reason");
    ctx.out.Bulk(e.reason);
    ctx.out.Bulk("context");
    ctx.out.Bulk(e.context);
    ctx.out.Bulk("object");
    ctx.out.Bulk(e.object);
    ctx.out.Bulk("username");
    ctx.out.Bulk(e.username);
    ctx.out.Bulk("age-seconds");
    ctx.out.Double(static_cast<double>(ctx.now.wall_ms - e.created_ms) / 1000);
    ctx.out.Bulk("client-info");
    ctx.out.Bulk(e.client_info);
  }
}

std::string AclFilePath(CommandContext& ctx) {
  std::lock_guard lock(ctx.server.options_mu);
  return ctx.server.options.aclfile;
}

constexpr std::string_view kNoAclFile =
    "ERR This Redis instance is not configured to use an ACL file. You may want to specify "
    "users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a "
    "Redis configuration file set) in order to store users in the Redis configuration.";

void LoadCommand(CommandContext& ctx) {
  const std::string path = AclFilePath(ctx);
  if (path.empty()) return ctx.out.Error(kNoAclFile);
  if (std::optional<std::string> error = acl::LoadAclFile(Acl(ctx), path)) {
    return ctx.out.Error("ERR " + *error);
  }
  SyncAuthRequired(ctx);
  ctx.out.Ok();
}

void SaveCommand(CommandContext& ctx) {
  const std::string path = AclFilePath(ctx);
  if (path.empty()) return ctx.out.Error(kNoAclFile);
  if (!acl::SaveAclFile(Acl(ctx), path)) {
    return ctx.out.Error(
        "ERR There was an error trying to save the ACLs. Please check the "
        "server logs for more information");
  }
  ctx.out.Ok();
}

void GenPassCommand(CommandContext& ctx) {
  std::int64_t bits = 256;
  if (ctx.argc() == 3 && !ParseInt64(ctx.arg(2), &bits)) return ctx.out.Error(errors::kNotInteger);
  if (ctx.argc() > 3)
    return ctx.out.Error("ERR wrong number of arguments for 'acl|genpass' command");
  if (bits <= 0 || bits > 4096) {
    return ctx.out.Error(
        "ERR ACL GENPASS argument must be the number of bits for the output "
        "password, a positive number up to 4096");
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::random_device rd;  // the kernel's CSPRNG on Linux
  std::string pass(static_cast<std::size_t>((bits + 3) / 4), '0');
  for (std::size_t i = 0; i < pass.size(); i += 8) {
    unsigned word = rd();
    for (std::size_t j = i; j < pass.size() && j < i + 8; ++j, word >>= 4)
      pass[j] = kHex[word & 15];
  }
  ctx.out.Bulk(pass);
}

void DryRunCommand(CommandContext& ctx) {
  std::shared_ptr<const acl::User> u = Acl(ctx).Find(ctx.arg(2));
  if (u == nullptr) {
    return ctx.out.Error("ERR User '" + std::string(protocol::ErrorArg(ctx.arg(2))) +
                         "' not found");
  }
  std::vector<std::string> line(ctx.args.begin() + 3, ctx.args.end());
  const CommandSpec* spec = ctx.server.commands->FindCommand(line);
  if (spec == nullptr) {
    return ctx.out.Error("ERR Command '" + std::string(protocol::ErrorArg(ctx.arg(3))) +
                         "' not found");
  }
  const std::size_t argc = line.size();
  if ((spec->arity > 0 && static_cast<std::size_t>(spec->arity) != argc) ||
      (spec->arity < 0 && argc < static_cast<std::size_t>(-spec->arity))) {
    return ctx.out.Error("ERR wrong number of arguments for '" + spec->name + "' command");
  }
  const acl::CommandIndex::Entry* entry = Acl(ctx).index().Of(spec);
  std::size_t pos = 0;
  const auto args = ctx.args.subspan(3);
  const acl::Denial d = entry ? acl::CheckCommand(*u, *entry, args, &pos) : acl::Denial::kNone;
  if (d == acl::Denial::kNone) return ctx.out.Ok();
  if (d == acl::Denial::kCommand) {
    return ctx.out.Bulk("This user has no permissions to run the '" + spec->name + "' command");
  }
  ctx.out.Bulk("This user has no permissions to access the '" + std::string(args[pos]) + "' " +
               (d == acl::Denial::kKey ? "key" : "channel"));
}

void HelpCommand(CommandContext& ctx) {
  static constexpr std::string_view kLines[] = {
      "ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "CAT [<category>]",
      "    List all commands that belong to <category>, or all command categories",
      "    when no category is specified.",
      "DELUSER <username> [<username> ...]",
      "    Delete a list of users.",
      "DRYRUN <username> <command> [<arg> ...]",
      "    Returns whether the user can execute the given command without executing the command.",
      "GETUSER <username>",
      "    Get the user's details.",
      "GENPASS [<bits>]",
      "    Generate a secure 256-bit user password. The optional `bits` argument can",
      "    be used to specify a different size.",
      "LIST",
      "    Show users details in config file format.",
      "LOAD",
      "    Reload users from the ACL file.",
      "LOG [<count> | RESET]",
      "    Show the ACL log entries.",
      "SAVE",
      "    Save the current config to the ACL file.",
      "SETUSER <username> <attribute> [<attribute> ...]",
      "    Create or modify a user with the specified attributes.",
      "USERS",
      "    List all the registered usernames.",
      "WHOAMI",
      "    Return the current connection username.",
      "HELP",
      "    Prints this help.",
  };
  WriteHelpLines(ctx.out, kLines);
}

constexpr SubcommandFamily kAclSub{
    .container = "acl", .flags = kCmdNoScript | kCmdLoading | kCmdStale, .group = "server"};

}  // namespace

void RegisterAclCommands(CommandTable& t) {
  CommandSpec acl{.name = "acl",
                  .arity = -2,
                  .flags = 0,
                  .group = "server",
                  .summary = "A container for Access List Control commands.",
                  .since = "6.0.0"};
  auto& s = acl.subcommands;
  s.push_back(kAclSub("cat", -2, 0, CatCommand,
                      "Lists the ACL categories, or the commands inside a category.", "6.0.0"));
  s.push_back(kAclSub("deluser", -3, kCmdAdmin, DelUserCommand,
                      "Deletes ACL users, and terminates their connections.", "6.0.0"));
  s.push_back(kAclSub("dryrun", -4, kCmdAdmin, DryRunCommand,
                      "Simulates the execution of a command by a user, without executing the "
                      "command.",
                      "7.0.0"));
  s.push_back(kAclSub("genpass", -2, 0, GenPassCommand,
                      "Generates a pseudorandom, secure password that can be used to identify ACL "
                      "users.",
                      "6.0.0"));
  s.push_back(
      kAclSub("getuser", 3, kCmdAdmin, GetUserCommand, "Lists the ACL rules of a user.", "6.0.0"));
  s.push_back(kAclSub("help", 2, 0, HelpCommand,
                      "Returns helpful text about the different subcommands.", "6.0.0"));
  s.push_back(kAclSub("list", 2, kCmdAdmin, ListCommand,
                      "Dumps the effective rules in ACL file format.", "6.0.0"));
  s.push_back(kAclSub("load", 2, kCmdAdmin, LoadCommand,
                      "Reloads the rules from the configured ACL "
                      "file.",
                      "6.0.0"));
  s.push_back(kAclSub("log", -2, kCmdAdmin, LogCommand,
                      "Lists recent security events generated due to ACL rules.", "6.0.0"));
  s.push_back(kAclSub("save", 2, kCmdAdmin, SaveCommand,
                      "Saves the effective ACL rules in the configured ACL file.", "6.0.0"));
  s.push_back(kAclSub("setuser", -3, kCmdAdmin, SetUserCommand,
                      "Creates and modifies an ACL user and its rules.", "6.0.0"));
  s.push_back(kAclSub("users", 2, kCmdAdmin, UsersCommand, "Lists all ACL users.", "6.0.0"));
  s.push_back(kAclSub("whoami", 2, 0, WhoAmICommand,
                      "Returns the authenticated username of the current connection.", "6.0.0"));
  t.Add(std::move(acl));
}

}  // namespace latch
