#include "commands/monitor.h"

#include <cstdio>
#include <functional>
#include <string>

#include "commands/command_table.h"
#include "commands/slowlog.h"
#include "metrics/monitor_feed.h"
#include "latch/protocol/split_args.h"

namespace latch {
namespace {

// "lua" for a script's call, "unix:<path>" for a Unix-socket client, else ip:port.
std::string Source(const CommandContext& ctx) {
  if (ctx.origin == CommandOrigin::kScript) return "lua";
  const ClientInfo* info = ctx.session.info.get();
  if (info == nullptr) return "?";
  if (!info->unix_socket) return info->addr;
  std::string_view path = info->addr;
  if (path.ends_with(":0")) path.remove_suffix(2);
  return "unix:" + std::string(path);
}

std::string MonitorLine(const CommandSpec& spec, const CommandContext& ctx) {
  char stamp[48];
  std::snprintf(stamp, sizeof(stamp), "+%lld.%06lld [0 ",
                static_cast<long long>(ctx.now.wall_us / 1'000'000),
                static_cast<long long>(ctx.now.wall_us % 1'000'000));
  std::string line = stamp;
  line.append(Source(ctx)).append("]");
  for (std::size_t i = 0; i < ctx.argc(); ++i) {
    line.push_back(' ');
    protocol::AppendQuotedArg(&line, RedactedArgument(spec, ctx.args, i) ? "(redacted)" : ctx.args[i]);
  }
  line.append("\r\n");
  return line;
}

void MonitorCommand(CommandContext& ctx) {
  const std::shared_ptr<ClientInfo>& info = ctx.session.info;
  if (info->monitor.load(std::memory_order_relaxed)) return;  // Redis ignores a second one
  bool pushable;
  {
    std::lock_guard lock(ctx.server.clients.mu);
    pushable = static_cast<bool>(info->push);
  }
  if (!pushable) return ctx.out.Error("ERR MONITOR needs a RESP connection");
  info->monitor.store(true, std::memory_order_relaxed);
  ctx.server.monitors->Add(info);
  ctx.out.Ok();
}
}  // namespace

void FeedMonitors(MonitorFeed& feed, const CommandSpec& spec, const CommandContext& ctx) {
  if ((spec.flags & kCmdAdmin) || spec.name == "monitor") return;
  feed.Push(MonitorLine(spec, ctx));
}

void RegisterMonitorCommand(CommandTable& t) {
  t.Add({.name = "monitor",
         .arity = 1,
         .flags = kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale,
         .handler = MonitorCommand,
         .group = "server",
         .summary = "Listens for all requests received by the server in real-time.",
         .since = "1.0.0"});
}

}  // namespace latch
