#include "commands/slowlog.h"

#include <algorithm>
#include <cstdint>

#include "commands/arg_parse.h"
#include "commands/command_table.h"
#include "commands/subcommand.h"
#include "latch/protocol/error_arg.h"
#include "metrics/slowlog.h"

namespace latch {
namespace {
constexpr std::size_t kMaxArgs = 32;       // Redis's SLOWLOG_ENTRY_MAX_ARGC
constexpr std::size_t kMaxArgBytes = 128;  // Redis's SLOWLOG_ENTRY_MAX_STRING

}  // namespace

bool RedactedArgument(const CommandSpec& spec, std::span<const std::string_view> args,
                      std::size_t i) {
  if (spec.name == "auth") return i >= 1;
  if (spec.name != "hello") return false;
  return (i >= 3 && EqualsNoCase(args[i - 1], "auth")) ||
         (i >= 4 && EqualsNoCase(args[i - 2], "auth"));
}

void SlowlogPush(CommandContext& ctx, const CommandSpec& spec, std::uint64_t micros) {
  // A script's redis.call()s are part of the script's entry; EXEC's queued commands are
  // logged one by one and EXEC itself not, as in Redis.
  if (ctx.origin == CommandOrigin::kScript || spec.name == "exec" || !ctx.server.slowlog) return;
  SlowlogEntry e;
  e.unix_seconds = ctx.now.wall_ms / 1000;
  e.micros = static_cast<std::int64_t>(micros);
  const std::size_t argc = std::min(ctx.argc(), kMaxArgs);
  for (std::size_t i = 0; i < argc; ++i) {
    if (i == kMaxArgs - 1 && ctx.argc() > kMaxArgs) {
      e.args.push_back("... (" + std::to_string(ctx.argc() - kMaxArgs + 1) + " more arguments)");
      break;
    }
    std::string_view a = ctx.args[i];
    if (RedactedArgument(spec, ctx.args, i)) {
      e.args.emplace_back("(redacted)");
    } else if (a.size() > kMaxArgBytes) {
      e.args.push_back(std::string(a.substr(0, kMaxArgBytes)) + "... (" +
                       std::to_string(a.size() - kMaxArgBytes) + " more bytes)");
    } else {
      e.args.emplace_back(a);
    }
  }
  if (ctx.session.info) {
    e.peer = ctx.session.info->addr;  // written before the first command; name by this thread
    e.name = ctx.session.info->name;
  }
  const auto max_len = ctx.server.slowlog_max_len.load(std::memory_order_relaxed);
  ctx.server.slowlog->Push(std::move(e), static_cast<std::size_t>(max_len < 0 ? 0 : max_len));
}

namespace {
void SlowlogGetCommand(CommandContext& ctx) {
  std::int64_t count = 10;
  if (ctx.argc() > 3) {
    // Redis quotes the subcommand as the client typed it.
    ctx.out.Error("ERR unknown subcommand or wrong number of arguments for '" +
                  std::string(protocol::ErrorArg(ctx.arg(1))) + "'. Try SLOWLOG HELP.");
    return;
  }
  if (ctx.argc() == 3) {
    if (!ParseInt64(ctx.arg(2), &count) || count < -1) {
      ctx.out.Error("ERR count should be greater than or equal to -1");
      return;
    }
    if (count == -1) count = INT64_MAX;
  }
  const auto entries = ctx.server.slowlog->Newest(static_cast<std::size_t>(count));
  ctx.out.ArrayHeader(entries.size());
  for (const SlowlogEntry& e : entries) {
    ctx.out.ArrayHeader(6);
    ctx.out.Integer(e.id);
    ctx.out.Integer(e.unix_seconds);
    ctx.out.Integer(e.micros);
    ctx.out.ArrayHeader(e.args.size());
    for (const auto& a : e.args) ctx.out.Bulk(a);
    ctx.out.Bulk(e.peer);
    ctx.out.Bulk(e.name);
  }
}

void SlowlogLenCommand(CommandContext& ctx) {
  ctx.out.Integer(static_cast<std::int64_t>(ctx.server.slowlog->size()));
}

void SlowlogResetCommand(CommandContext& ctx) {
  ctx.server.slowlog->Reset();
  ctx.out.Ok();
}

void SlowlogHelpCommand(CommandContext& ctx) {
  static constexpr std::string_view kLines[] = {
      "SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "GET [<count>]",
      "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
      "    Entries are made of:",
      "    id, timestamp, time in microseconds, arguments array, client IP and port,",
      "    client name",
      "LEN",
      "    Return the length of the slowlog.",
      "RESET",
      "    Reset the slowlog.",
      "HELP",
      "    Prints this help.",
  };
  WriteHelpLines(ctx.out, kLines);
}

constexpr SubcommandFamily kSlowlogSub{
    .container = "slowlog", .flags = kCmdAdmin | kCmdLoading | kCmdStale, .group = "server"};

}  // namespace

void RegisterSlowlogCommands(CommandTable& t) {
  CommandSpec slowlog{.name = "slowlog",
                      .arity = -2,
                      .flags = 0,
                      .group = "server",
                      .summary = "A container for slow log commands.",
                      .since = "2.2.12"};
  slowlog.subcommands.push_back(
      kSlowlogSub("get", -2, SlowlogGetCommand, "Returns the slow log's entries.", "2.2.12"));
  slowlog.subcommands.push_back(kSlowlogSub(
      "len", 2, SlowlogLenCommand, "Returns the number of entries in the slow log.", "2.2.12"));
  slowlog.subcommands.push_back(kSlowlogSub("reset", 2, SlowlogResetCommand,
                                            "Clears all entries from the slow log.", "2.2.12"));
  slowlog.subcommands.push_back(kSlowlogSub(
      "help", 2, SlowlogHelpCommand, "Show helpful text about the different subcommands", "6.2.0"));
  t.Add(std::move(slowlog));
}

}  // namespace latch
