// COMMAND, COMMAND COUNT/INFO/DOCS/LIST/HELP: built from the command table itself, so what
// clients learn (arity, flags, key positions) is exactly what Dispatch enforces.
#include <string>
#include <vector>

#include "acl/command_index.h"
#include "catalogue/command_keys.h"
#include "commands/arg_parse.h"
#include "commands/command_args.h"
#include "commands/command_table.h"
#include "commands/errors.h"
#include "commands/subcommand.h"
#include "glob_match.h"

namespace latch {

std::string_view ArgumentNotation(std::string_view name);  // command_arg_notation.cpp

namespace {

std::vector<std::string_view> FlagNames(const CommandSpec& c) {
  const std::uint32_t f = c.flags;
  std::vector<std::string_view> v;
  if (f & kCmdWrite) v.push_back("write");
  if (f & kCmdReadonly) v.push_back("readonly");
  if (f & kCmdDenyOom) v.push_back("denyoom");
  if (f & kCmdAdmin) v.push_back("admin");
  if (f & kCmdPubSub) v.push_back("pubsub");
  if (f & kCmdNoScript) v.push_back("noscript");
  if (f & kCmdBlocking) v.push_back("blocking");
  if (f & kCmdLoading) v.push_back("loading");
  if (f & kCmdStale) v.push_back("stale");
  if (f & kCmdFast) v.push_back("fast");
  if (f & kCmdNoAuth) v.push_back("no_auth");
  if (f & kCmdAllowBusy) v.push_back("allow_busy");
  if (CommandHasMovableKeys(c)) v.push_back("movablekeys");
  return v;
}

// Derived in one place (acl/command_index.cpp), so COMMAND INFO shows what ACL rules use.
std::vector<std::string> AclCategories(const CommandSpec& c) {
  std::vector<std::string> v;
  const std::uint32_t cats = acl::CategoriesOf(c);
  const auto names = acl::CategoryNames();
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (cats & (1u << i)) v.push_back("@" + std::string(names[i]));
  }
  return v;
}

void WriteInfo(protocol::ReplyWriter& out, const CommandSpec& c) {
  out.ArrayHeader(10);
  out.Bulk(c.name);
  out.Integer(c.arity);
  auto flags = FlagNames(c);
  out.SetHeader(flags.size());
  for (auto f : flags) out.Simple(f);
  out.Integer(c.first_key);
  out.Integer(c.last_key);
  out.Integer(c.key_step);
  auto cats = AclCategories(c);
  out.SetHeader(cats.size());
  for (const auto& a : cats) out.Simple(a);
  out.ArrayHeader(0);  // tips
  if (c.first_key > 0) {
    // One key spec in Redis 7's shape: begin_search index, find_keys range.
    out.ArrayHeader(1);
    out.MapHeader(4);
    out.Bulk("flags");
    out.SetHeader(1);
    out.Simple((c.flags & kCmdWrite) ? "RW" : "RO");
    out.Bulk("begin_search");
    out.MapHeader(2);
    out.Bulk("type");
    out.Bulk("index");
    out.Bulk("spec");
    out.MapHeader(1);
    out.Bulk("index");
    out.Integer(c.first_key);
    out.Bulk("find_keys");
    out.MapHeader(2);
    out.Bulk("type");
    out.Bulk("range");
    out.Bulk("spec");
    out.MapHeader(3);
    out.Bulk("lastkey");
    out.Integer(c.last_key < 0 ? c.last_key : c.last_key - c.first_key);
    out.Bulk("keystep");
    out.Integer(c.key_step);
    out.Bulk("limit");
    out.Integer(0);
    out.Bulk("notes");
    out.Bulk("");
  } else {
    out.ArrayHeader(0);
  }
  out.ArrayHeader(c.subcommands.size());
  for (const auto& s : c.subcommands) WriteInfo(out, s);
}

void WriteDocs(protocol::ReplyWriter& out, const CommandSpec& c) {
  std::string_view notation = ArgumentNotation(c.name);
  std::size_t fields = 3 + (c.IsContainer() ? 1 : 0) + (notation.empty() ? 0 : 1);
  out.MapHeader(fields);
  out.Bulk("summary");
  out.Bulk(c.summary);
  out.Bulk("since");
  out.Bulk(c.since);
  out.Bulk("group");
  out.Bulk(c.group);
  if (!notation.empty()) {
    out.Bulk("arguments");
    // A malformed notation is caught by a unit test; never emit half a reply.
    if (!WriteCommandArguments(out, notation)) out.ArrayHeader(0);
  }
  if (c.IsContainer()) {
    out.Bulk("subcommands");
    out.MapHeader(c.subcommands.size());
    for (const auto& s : c.subcommands) {
      out.Bulk(s.name);
      WriteDocs(out, s);
    }
  }
}

// Resolves "client|setname" as well as plain names.
const CommandSpec* Lookup(const CommandTable& t, std::string_view name) {
  auto bar = name.find('|');
  if (bar == std::string_view::npos) return t.Find(name);
  const CommandSpec* parent = t.Find(name.substr(0, bar));
  return parent ? parent->FindSubcommand(name.substr(bar + 1)) : nullptr;
}

void CommandCommand(CommandContext& ctx) {
  const CommandTable& t = *ctx.server.commands;
  ctx.out.ArrayHeader(t.size());
  t.ForEach([&](const CommandSpec& c) { WriteInfo(ctx.out, c); });
}

void CommandCountCommand(CommandContext& ctx) {
  ctx.out.Integer(static_cast<std::int64_t>(ctx.server.commands->size()));
}

void CommandInfoCommand(CommandContext& ctx) {
  const CommandTable& t = *ctx.server.commands;
  if (ctx.argc() == 2) return CommandCommand(ctx);
  ctx.out.ArrayHeader(ctx.argc() - 2);
  for (std::size_t i = 2; i < ctx.argc(); ++i) {
    const CommandSpec* c = Lookup(t, ctx.arg(i));
    if (c == nullptr) {
      ctx.out.Null();  // Redis: a null bulk ($-1) for an unknown name
    } else {
      WriteInfo(ctx.out, *c);
    }
  }
}

void CommandDocsCommand(CommandContext& ctx) {
  const CommandTable& t = *ctx.server.commands;
  std::vector<const CommandSpec*> specs;
  if (ctx.argc() == 2) {
    t.ForEach([&](const CommandSpec& c) { specs.push_back(&c); });
  } else {
    for (std::size_t i = 2; i < ctx.argc(); ++i) {
      if (const CommandSpec* c = Lookup(t, ctx.arg(i))) specs.push_back(c);
    }
  }
  ctx.out.MapHeader(specs.size());
  for (const CommandSpec* c : specs) {
    ctx.out.Bulk(c->name);
    WriteDocs(ctx.out, *c);
  }
}

// COMMAND LIST [FILTERBY MODULE name | ACLCAT category | PATTERN pattern]: every command's
// full name, each container followed by its subcommands ("config|get"), as Redis lists them.
// No modules here: a MODULE filter matches nothing; so does an unknown category.
void CommandListCommand(CommandContext& ctx) {
  enum class Filter { kNone, kModule, kAclCat, kPattern } filter = Filter::kNone;
  std::string_view arg;
  if (ctx.argc() != 2) {
    if (ctx.argc() != 5 || !EqualsNoCase(ctx.arg(2), "filterby")) {
      return ctx.out.Error(errors::kSyntax);
    }
    arg = ctx.arg(4);
    if (EqualsNoCase(ctx.arg(3), "module")) {
      filter = Filter::kModule;
    } else if (EqualsNoCase(ctx.arg(3), "aclcat")) {
      filter = Filter::kAclCat;
    } else if (EqualsNoCase(ctx.arg(3), "pattern")) {
      filter = Filter::kPattern;
    } else {
      return ctx.out.Error(errors::kSyntax);
    }
  }
  const std::uint32_t category = filter == Filter::kAclCat ? acl::CategoryByName(arg) : 0;
  auto listed = [&](const CommandSpec& c) {
    switch (filter) {
      case Filter::kNone: return true;
      case Filter::kModule: return false;
      case Filter::kAclCat: return category != 0 && (acl::CategoriesOf(c) & category) != 0;
      case Filter::kPattern: return GlobMatch(arg, c.name, true);
    }
    return false;
  };
  std::vector<std::string_view> names;
  ctx.server.commands->ForEach([&](const CommandSpec& c) {
    if (listed(c)) names.push_back(c.name);
    for (const CommandSpec& sub : c.subcommands) {
      if (listed(sub)) names.push_back(sub.name);
    }
  });
  ctx.out.ArrayHeader(names.size());
  for (std::string_view n : names) ctx.out.Bulk(n);
}

// COMMAND GETKEYS / GETKEYSANDFLAGS <command line>: the keys it names (catalogue/command_keys.h),
// with Redis's checks in Redis's order. The flags are those of COMMAND INFO's key spec (RW or
// RO) with the access a key is used for; Redis's per-command key specs are finer (OW, RM,
// insert, delete) and latch does not carry them.
void GetKeys(CommandContext& ctx, bool with_flags) {
  const std::span<const std::string_view> line = ctx.args.subspan(2);
  const CommandSpec* spec = ctx.server.commands->Find(line[0]);
  if (spec != nullptr && spec->IsContainer() && line.size() >= 2) {
    spec = spec->FindSubcommand(line[1]);
  }
  if (spec == nullptr) return ctx.out.Error("ERR Invalid command specified");
  if (!CommandHasKeys(*spec)) return ctx.out.Error("ERR The command has no key arguments");
  const auto n = static_cast<int>(line.size());
  if ((spec->arity > 0 && spec->arity != n) || n < -spec->arity) {
    return ctx.out.Error("ERR Invalid number of arguments specified for command");
  }
  std::vector<KeyArg> keys;
  if (!CommandKeys(*spec, line, &keys)) {
    return ctx.out.Error("ERR Invalid arguments specified for command");
  }
  ctx.out.ArrayHeader(keys.size());
  for (const KeyArg& k : keys) {
    if (!with_flags) {
      ctx.out.Bulk(line[k.pos]);
      continue;
    }
    ctx.out.ArrayHeader(2);
    ctx.out.Bulk(line[k.pos]);
    const bool write = k.access != KeyAccess::kRead;
    ctx.out.SetHeader(write ? 3 : 2);
    ctx.out.Simple(write ? "RW" : "RO");
    ctx.out.Simple("access");
    if (write) ctx.out.Simple("update");
  }
}

void CommandGetKeysCommand(CommandContext& ctx) { GetKeys(ctx, false); }
void CommandGetKeysAndFlagsCommand(CommandContext& ctx) { GetKeys(ctx, true); }

void CommandHelpCommand(CommandContext& ctx) {
  static constexpr std::string_view kLines[] = {
      "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "(no subcommand)",
      "    Return details about all Redis commands.",
      "COUNT",
      "    Return the total number of commands in this Redis server.",
      "LIST",
      "    Return a list of all commands in this Redis server.",
      "INFO [<command-name> ...]",
      "    Return details about multiple Redis commands.",
      "    If no command names are given, documentation details for all",
      "    commands are returned.",
      "DOCS [<command-name> ...]",
      "    Return documentation details about multiple Redis commands.",
      "    If no command names are given, documentation details for all",
      "    commands are returned.",
      "GETKEYS <full-command>",
      "    Return the keys from a full Redis command.",
      "GETKEYSANDFLAGS <full-command>",
      "    Return the keys and the access flags from a full Redis command.",
      "HELP",
      "    Prints this help.",
  };
  WriteHelpLines(ctx.out, kLines);
}

constexpr SubcommandFamily kCommandSub{
    .container = "command", .flags = kCmdLoading | kCmdStale, .group = "server"};

}  // namespace

void RegisterIntrospectionCommands(CommandTable& t) {
  CommandSpec command{.name = "command",
                      .arity = -1,
                      .flags = kCmdLoading | kCmdStale,
                      .handler = CommandCommand,
                      .group = "server",
                      .summary = "Returns detailed information about all commands.",
                      .since = "2.8.13"};
  command.subcommands.push_back(
      kCommandSub("count", 2, CommandCountCommand, "Returns a count of commands.", "2.8.13"));
  command.subcommands.push_back(
      kCommandSub("info", -2, CommandInfoCommand,
                  "Returns information about one, multiple or all commands.", "2.8.13"));
  command.subcommands.push_back(
      kCommandSub("docs", -2, CommandDocsCommand,
                  "Returns documentary information about one, multiple or "
                  "all commands.",
                  "7.0.0"));
  command.subcommands.push_back(
      kCommandSub("list", -2, CommandListCommand, "Returns a list of command names.", "7.0.0"));
  command.subcommands.push_back(kCommandSub("getkeys", -4, CommandGetKeysCommand,
                                            "Extracts the key names from an arbitrary command.",
                                            "2.8.13"));
  command.subcommands.push_back(
      kCommandSub("getkeysandflags", -4, CommandGetKeysAndFlagsCommand,
                  "Extracts the key names and access flags for an arbitrary "
                  "command.",
                  "7.0.0"));
  command.subcommands.push_back(kCommandSub("help", 2, CommandHelpCommand,
                                            "Returns helpful text about the different subcommands.",
                                            "5.0.0"));
  t.Add(std::move(command));
}

}  // namespace latch
