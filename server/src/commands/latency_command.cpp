// LATENCY LATEST/HISTORY/RESET/DOCTOR/GRAPH/HELP as Redis answers them when no event ever
// crossed latency-monitor-threshold: latchd records no latency events (its per-command
// latencies are in INFO latencystats and /metrics instead), so this is also what it answers
// with a threshold set.
#include "commands/command_table.h"

namespace latch {
namespace {

void EmptyArrayCommand(CommandContext& ctx) { ctx.out.ArrayHeader(0); }

void LatencyResetCommand(CommandContext& ctx) { ctx.out.Integer(0); }

void LatencyGraphCommand(CommandContext& ctx) {
  ctx.out.Error("ERR No samples available for event '" + std::string(ctx.arg(2)) + "'");
}

void LatencyDoctorCommand(CommandContext& ctx) {
  ctx.out.Verbatim(
      "I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance. "
      "You may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in order to enable "
      "it. If we weren't in a deep space mission I'd suggest to take a look at "
      "https://redis.io/topics/latency-monitor.\n");
}

void LatencyHelpCommand(CommandContext& ctx) {
  static constexpr std::string_view kLines[] = {
      "LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "DOCTOR",
      "    Return a human readable latency analysis report.",
      "GRAPH <event>",
      "    Return an ASCII latency graph for the <event> class.",
      "HISTORY <event>",
      "    Return time-latency samples for the <event> class.",
      "LATEST",
      "    Return the latest latency samples for all events.",
      "RESET [<event> ...]",
      "    Reset latency data of one or more <event> classes.",
      "    (default: reset all data for all event classes)",
      "HISTOGRAM [COMMAND ...]",
      "    Return a cumulative distribution of latencies in the format of a histogram for the "
      "specified command names.",
      "    If no commands are specified then all histograms are replied.",
      "HELP",
      "    Prints this help.",
  };
  WriteHelpLines(ctx.out, kLines);
}

CommandSpec Sub(std::string name, int arity, CommandHandler h, std::string_view summary) {
  return CommandSpec{.name = std::move(name),
                     .arity = arity,
                     .flags = kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale,
                     .handler = h,
                     .group = "server",
                     .summary = summary,
                     .since = "2.8.13"};
}
}  // namespace

void RegisterLatencyCommands(CommandTable& t) {
  CommandSpec latency{.name = "latency",
                      .arity = -2,
                      .flags = 0,
                      .group = "server",
                      .summary = "A container for latency diagnostics commands.",
                      .since = "2.8.13"};
  latency.subcommands.push_back(Sub("latency|latest", 2, EmptyArrayCommand,
                                    "Returns the latest latency samples for all events."));
  latency.subcommands.push_back(Sub("latency|history", 3, EmptyArrayCommand,
                                    "Returns timestamp-latency samples for an event."));
  latency.subcommands.push_back(Sub("latency|reset", -2, LatencyResetCommand,
                                    "Resets the latency data for one or more events."));
  latency.subcommands.push_back(
      Sub("latency|graph", 3, LatencyGraphCommand, "Returns a latency graph for an event."));
  latency.subcommands.push_back(Sub("latency|doctor", 2, LatencyDoctorCommand,
                                    "Returns a human-readable latency analysis report."));
  latency.subcommands.push_back(Sub("latency|help", 2, LatencyHelpCommand,
                                    "Returns helpful text about the different subcommands."));
  t.Add(std::move(latency));
}

}  // namespace latch
