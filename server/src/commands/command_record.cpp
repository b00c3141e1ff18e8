#include "commands/command_record.h"

#include "commands/monitor.h"
#include "commands/slowlog.h"
#include "metrics/latency_monitor.h"

namespace latch {

void RecordCommandCall(const CommandSpec& spec, CommandContext& ctx, const CommandTimer& timer,
                       std::size_t reply_start) {
  RecordCall(spec, ctx, timer, reply_start);
}

void RecordRare(const CommandSpec& spec, CommandContext& ctx, std::uint64_t nanos) {
  ServerState& st = ctx.server;
  if (st.monitors && st.monitors->active()) FeedMonitors(*st.monitors, spec, ctx);
  const std::int64_t slower_than = st.slowlog_slower_than.load(std::memory_order_relaxed);
  if (slower_than >= 0 && static_cast<std::int64_t>(nanos / 1000) >= slower_than) {
    SlowlogPush(ctx, spec, nanos / 1000);
  }
  const std::int64_t monitor_ms = st.latency_monitor_threshold.load(std::memory_order_relaxed);
  if (monitor_ms > 0 && static_cast<std::int64_t>(nanos / 1'000'000) >= monitor_ms) {
    LatencySampleIfNeeded(st.latency_monitor.get(), monitor_ms,
                          (spec.flags & kCmdFast) ? "fast-command" : "command",
                          static_cast<std::int64_t>(nanos / 1'000'000), ctx.now.wall_ms / 1000);
  }
}

void RecordCommandRejected(const CommandSpec& spec, CommandContext& ctx) {
  if (ctx.server.command_stats) ctx.server.command_stats->Rejected(spec.stat_id);
}

}  // namespace latch
