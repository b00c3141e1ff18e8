// FUNCTION and FCALL/FCALL_RO (Redis 7.0) for a server that has no function libraries.
// latchd runs scripts through EVAL/EVALSHA only: Redis functions are persisted server-side
// code with their own loader, which no lock library uses. What exists is what a client or a
// test harness meets on a server without libraries: FUNCTION FLUSH answers OK (Redis's test
// suite sends it before every test group), LIST an empty array, STATS no running function and
// an empty LUA engine, DELETE "Library not found", FCALL "Function not found", KILL NOTBUSY,
// all with Redis 7.0.15's texts. LOAD, DUMP and RESTORE, which would create libraries, are
// refused with a message that says so.
#include <string>

#include "commands/arg_parse.h"
#include "commands/command_table.h"
#include "commands/subcommand.h"
#include "latch/protocol/error_arg.h"

namespace latch {
namespace {

constexpr std::string_view kNoFunctions =
    "ERR latchd does not support Redis functions: use EVAL or EVALSHA";

void FunctionFlushCommand(CommandContext& ctx) {
  if (ctx.argc() > 3) {
    return ctx.out.Error(
        "ERR unknown subcommand or wrong number of arguments for 'flush'. Try FUNCTION HELP.");
  }
  if (ctx.argc() == 3 && !EqualsNoCase(ctx.arg(2), "sync") &&
      !EqualsNoCase(ctx.arg(2), "async")) {
    return ctx.out.Error("ERR FUNCTION FLUSH only supports SYNC|ASYNC option");
  }
  ctx.out.Ok();
}

void FunctionListCommand(CommandContext& ctx) {
  bool with_code = false, library_name = false;
  for (std::size_t i = 2; i < ctx.argc(); ++i) {
    if (!with_code && EqualsNoCase(ctx.arg(i), "withcode")) {
      with_code = true;
      continue;
    }
    if (!library_name && EqualsNoCase(ctx.arg(i), "libraryname")) {
      if (i + 1 >= ctx.argc()) return ctx.out.Error("ERR library name argument was not given");
      library_name = true;
      ++i;
      continue;
    }
    return ctx.out.Error("ERR Unknown argument " + std::string(protocol::ErrorArg(ctx.arg(i))));
  }
  ctx.out.ArrayHeader(0);
}

void FunctionStatsCommand(CommandContext& ctx) {
  ctx.out.MapHeader(2);
  ctx.out.Bulk("running_script");
  ctx.out.Null();
  ctx.out.Bulk("engines");
  ctx.out.MapHeader(1);
  ctx.out.Bulk("LUA");
  ctx.out.MapHeader(2);
  ctx.out.Bulk("libraries_count");
  ctx.out.Integer(0);
  ctx.out.Bulk("functions_count");
  ctx.out.Integer(0);
}

void FunctionDeleteCommand(CommandContext& ctx) { ctx.out.Error("ERR Library not found"); }
void FunctionKillCommand(CommandContext& ctx) {
  ctx.out.Error("NOTBUSY No scripts in execution right now.");
}
void FunctionRefuseCommand(CommandContext& ctx) { ctx.out.Error(kNoFunctions); }
void FcallCommand(CommandContext& ctx) { ctx.out.Error("ERR Function not found"); }

void FunctionHelpCommand(CommandContext& ctx) {
  static constexpr std::string_view kLines[] = {
      "FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "DELETE <LIBRARY NAME>",
      "    Delete the given library (latchd has none).",
      "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
      "    Return general information on all the libraries (latchd has none).",
      "STATS",
      "    Return information about the current function running and the engines.",
      "KILL",
      "    Kill the current running function.",
      "FLUSH [ASYNC|SYNC]",
      "    Delete all the libraries.",
      "LOAD, DUMP, RESTORE",
      "    Not supported by latchd: use EVAL or EVALSHA.",
      "HELP",
      "    Prints this help.",
  };
  WriteHelpLines(ctx.out, kLines);
}

constexpr SubcommandFamily kFunctionSub{
    .container = "function", .flags = kCmdNoScript, .group = "scripting", .since = "7.0.0"};

}  // namespace

void RegisterFunctionCommands(CommandTable& t) {
  CommandSpec function{.name = "function",
                       .arity = -2,
                       .flags = 0,
                       .group = "scripting",
                       .summary = "A container for function commands.",
                       .since = "7.0.0"};
  auto& subs = function.subcommands;
  subs.push_back(kFunctionSub("delete", 3, kCmdWrite, FunctionDeleteCommand, "Deletes a library."));
  subs.push_back(kFunctionSub("dump", 2, 0, FunctionRefuseCommand, "Dumps all libraries."));
  subs.push_back(
      kFunctionSub("flush", -2, kCmdWrite, FunctionFlushCommand, "Deletes all libraries."));
  subs.push_back(kFunctionSub("help", 2, kCmdLoading | kCmdStale, FunctionHelpCommand,
                              "Returns helpful text about the different subcommands."));
  subs.push_back(kFunctionSub("kill", 2, kCmdAllowBusy, FunctionKillCommand,
                              "Terminates a function during execution."));
  subs.push_back(
      kFunctionSub("list", -2, 0, FunctionListCommand, "Returns information about all libraries."));
  subs.push_back(kFunctionSub("load", -3, kCmdWrite | kCmdDenyOom, FunctionRefuseCommand,
                              "Creates a library."));
  subs.push_back(kFunctionSub("restore", -3, kCmdWrite | kCmdDenyOom, FunctionRefuseCommand,
                              "Restores all libraries from a payload."));
  subs.push_back(kFunctionSub("stats", 2, kCmdAllowBusy, FunctionStatsCommand,
                              "Returns information about a function during execution."));
  t.Add(std::move(function));
  for (const char* name : {"fcall", "fcall_ro"}) {
    t.Add({.name = name, .arity = -3,
           .flags = kCmdNoScript | kCmdStale | (name[5] == '_' ? kCmdReadonly : 0u),
           .handler = FcallCommand, .group = "scripting", .summary = "Invokes a function.",
           .since = "7.0.0"});
  }
}

}  // namespace latch
