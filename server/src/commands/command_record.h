#pragma once
// The record of a command that ran, inline for Dispatch (commands/command_table.cpp), which
// pays it on every request: the end clock read, commandstats' counters and histogram bucket
// in the thread's own block, and one compare that sends the rare case out of line (SLOWLOG,
// LATENCY and MONITOR: a command at least as slow as CommandStats::slow_nanos(), or a
// MONITOR connected). Heavier includes than metrics/command_stats.h: include it only where a
// command is recorded.
#include <cstdint>
#include <string>

#include "commands/command_table.h"
#include "metrics/command_stats.h"
#include "metrics/monitor_feed.h"
#include "server_state.h"

namespace latch {

// After a command ran: commandstats, latency, slowlog. `reply_start`: the size of the reply
// buffer before the handler ran (an error reply there is a failed call). Out of line (the
// script thread); Dispatch uses the inline RecordCall below.
void RecordCommandCall(const CommandSpec& spec, CommandContext& ctx, const CommandTimer& timer,
                       std::size_t reply_start);
void RecordCommandRejected(const CommandSpec& spec, CommandContext& ctx);

// MONITOR's feed, SLOWLOG and LATENCY, each checked against its own setting.
void RecordRare(const CommandSpec& spec, CommandContext& ctx, std::uint64_t nanos);

[[gnu::always_inline]] inline void RecordCall(const CommandSpec& spec, CommandContext& ctx,
                                              const CommandTimer& timer, std::size_t reply_start) {
  const std::int64_t end = CommandClockNanos();
  CommandBatch::Mark(end);
  const std::int64_t elapsed = end - timer.start;
  const auto nanos = static_cast<std::uint64_t>(elapsed > 0 ? elapsed : 0);
  const std::string* out = ctx.out.buffer();
  const bool failed = out != nullptr && out->size() > reply_start && (*out)[reply_start] == '-';
  ServerState& st = ctx.server;
  CommandStats* stats = st.command_stats.get();
  if (stats == nullptr) return;
  stats->Record(spec.stat_id, nanos, failed, st.latency_tracking.load(std::memory_order_relaxed));
  if (nanos >= stats->slow_nanos() || (st.monitors && st.monitors->active())) [[unlikely]] {
    RecordRare(spec, ctx, nanos);
  }
}

}  // namespace latch
