// EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT LOAD|EXISTS|FLUSH|KILL|HELP (Redis 7.0).
// The work is done by scripting::ScriptEngine; this file only declares the commands.
#include "commands/command_table.h"
#include "commands/script_host.h"
#include "commands/subcommand.h"
#include "commands/transaction_commands.h"

namespace latch {
namespace {

void EvalCommand(CommandContext& ctx) { ScriptsFor(ctx).Eval(ctx, false, false); }
void EvalShaCommand(CommandContext& ctx) { ScriptsFor(ctx).Eval(ctx, true, false); }
void EvalRoCommand(CommandContext& ctx) { ScriptsFor(ctx).Eval(ctx, false, true); }
void EvalShaRoCommand(CommandContext& ctx) { ScriptsFor(ctx).Eval(ctx, true, true); }
void ScriptLoadCommand(CommandContext& ctx) { ScriptsFor(ctx).ScriptLoad(ctx); }
void ScriptExistsCommand(CommandContext& ctx) { ScriptsFor(ctx).ScriptExists(ctx); }
void ScriptFlushCommand(CommandContext& ctx) { ScriptsFor(ctx).ScriptFlush(ctx); }
void ScriptKillCommand(CommandContext& ctx) { ScriptsFor(ctx).ScriptKill(ctx); }

void ScriptHelpCommand(CommandContext& ctx) {
  static constexpr std::string_view kLines[] = {
      "SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "DEBUG (YES|SYNC|NO)",
      "    Set the debug mode for subsequent scripts executed.",
      "EXISTS <sha1> [<sha1> ...]",
      "    Return information about the existence of the scripts in the script cache.",
      "FLUSH [ASYNC|SYNC]",
      "    Flush the Lua scripts cache. Very dangerous on replicas.",
      "    When called without the optional mode argument, the behavior is determined by the",
      "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
      "    * ASYNC: Asynchronously flush the scripts cache.",
      "    * SYNC: Synchronously flush the scripts cache.",
      "KILL",
      "    Kill the currently executing Lua script.",
      "LOAD <script>",
      "    Load a script into the scripts cache without executing it.",
      "HELP",
      "    Prints this help.",
  };
  WriteHelpLines(ctx.out, kLines);
}

CommandSpec Eval(std::string name, std::uint32_t flags, CommandHandler h, std::string_view summary,
                 std::string_view since) {
  return CommandSpec{.name = std::move(name),
                     .arity = -3,
                     .flags = kCmdNoScript | kCmdStale | flags,
                     .handler = h,
                     .group = "scripting",
                     .summary = summary,
                     .since = since};
}

constexpr SubcommandFamily kScriptSub{.container = "script", .flags = 0, .group = "scripting"};

}  // namespace

ScriptHost& ScriptsFor(CommandContext& ctx) { return ctx.server.commands->scripts(ctx.server); }

void ExecOnScriptThread(CommandContext& ctx) { ScriptsFor(ctx).Exec(ctx); }

void RegisterScriptingCommands(CommandTable& t) {
  t.Add(Eval("eval", 0, EvalCommand, "Executes a server-side Lua script.", "2.6.0"));
  t.Add(Eval("evalsha", 0, EvalShaCommand, "Executes a server-side Lua script by SHA1 digest.",
             "2.6.0"));
  t.Add(Eval("eval_ro", kCmdReadonly, EvalRoCommand, "Executes a read-only server-side Lua script.",
             "7.0.0"));
  t.Add(Eval("evalsha_ro", kCmdReadonly, EvalShaRoCommand,
             "Executes a read-only server-side Lua script by SHA1 digest.", "7.0.0"));
  CommandSpec script{.name = "script",
                     .arity = -2,
                     .flags = 0,
                     .group = "scripting",
                     .summary = "A container for Lua scripts management commands.",
                     .since = "2.6.0"};
  script.subcommands.push_back(kScriptSub("exists", -3, kCmdNoScript, ScriptExistsCommand,
                                          "Determines whether server-side Lua scripts exist in the "
                                          "script cache.",
                                          "2.6.0"));
  script.subcommands.push_back(
      kScriptSub("flush", -2, kCmdNoScript, ScriptFlushCommand,
                 "Removes all server-side Lua scripts from the script cache.", "2.6.0"));
  script.subcommands.push_back(kScriptSub("help", 2, kCmdLoading | kCmdStale, ScriptHelpCommand,
                                          "Returns helpful text about the different subcommands.",
                                          "5.0.0"));
  script.subcommands.push_back(
      kScriptSub("kill", 2, kCmdNoScript | kCmdAllowBusy, ScriptKillCommand,
                 "Terminates a server-side Lua script during execution.", "2.6.0"));
  script.subcommands.push_back(kScriptSub("load", 3, kCmdNoScript | kCmdStale, ScriptLoadCommand,
                                          "Loads a server-side Lua script to the script cache.",
                                          "2.6.0"));
  t.Add(std::move(script));
}

}  // namespace latch
