// LATENCY: the event monitor's LATEST/HISTORY/RESET/DOCTOR (metrics/latency_monitor.h, fed
// when latency-monitor-threshold > 0) with Redis's reply shapes; GRAPH is refused for an
// event with samples (HISTORY has the same numbers); HISTOGRAM reports the per-command
// latencies of INFO latencystats.
#include <string_view>
#include <utility>
#include <vector>

#include "commands/command_table.h"
#include "commands/latency_doctor.h"
#include "commands/subcommand.h"
#include "latch/protocol/error_arg.h"
#include "metrics/command_stats.h"
#include "metrics/latency_monitor.h"
#include "server_state.h"

namespace latch {
namespace {

// The commands LATENCY HISTOGRAM names: "config|get" form or a plain name; a container
// stands for its subcommands; unknown names are skipped, as in Redis.
void AddNamed(const CommandTable& table, std::string_view name,
              std::vector<const CommandSpec*>* out) {
  const auto bar = name.find('|');
  const CommandSpec* spec = table.Find(name.substr(0, bar));
  if (spec != nullptr && bar != std::string_view::npos) {
    spec = spec->FindSubcommand(name.substr(bar + 1));
  }
  if (spec == nullptr) return;
  if (!spec->IsContainer()) return out->push_back(spec);
  for (const CommandSpec& sub : spec->subcommands) out->push_back(&sub);
}

// LATENCY HISTOGRAM [command ...]: each command that ran, with its calls and the cumulative
// distribution of its latencies (metrics/command_stats.h).
void LatencyHistogramCommand(CommandContext& ctx) {
  const CommandTable& table = *ctx.server.commands;
  std::vector<const CommandSpec*> specs;
  if (ctx.argc() == 2) {
    table.ForEach([&](const CommandSpec& spec) { AddNamed(table, spec.name, &specs); });
  } else {
    for (std::size_t i = 2; i < ctx.argc(); ++i) AddNamed(table, ctx.arg(i), &specs);
  }
  struct Row {
    const CommandSpec* spec;
    std::uint64_t calls;
    std::vector<std::pair<std::int64_t, std::uint64_t>> cdf;
  };
  std::vector<Row> rows;
  for (const CommandSpec* spec : specs) {
    auto cdf = ctx.server.command_stats->CumulativeUsec(spec->stat_id);
    if (cdf.empty()) continue;
    rows.push_back({spec, cdf.back().second, std::move(cdf)});
  }
  ctx.out.MapHeader(rows.size());
  for (const Row& r : rows) {
    ctx.out.Bulk(r.spec->name);
    ctx.out.MapHeader(2);
    ctx.out.Bulk("calls");
    ctx.out.Integer(static_cast<std::int64_t>(r.calls));
    ctx.out.Bulk("histogram_usec");
    ctx.out.MapHeader(r.cdf.size());
    for (const auto& [usec, count] : r.cdf) {
      ctx.out.Integer(usec);
      ctx.out.Integer(static_cast<std::int64_t>(count));
    }
  }
}

// LATENCY LATEST: [event, time of the last sample, its latency, the worst ever] per event.
void LatencyLatestCommand(CommandContext& ctx) {
  const std::vector<LatencyEvent> events = ctx.server.latency_monitor->Events();
  ctx.out.ArrayHeader(events.size());
  for (const LatencyEvent& e : events) {
    ctx.out.ArrayHeader(4);
    ctx.out.Bulk(e.name);
    ctx.out.Integer(e.samples.back().unix_seconds);
    ctx.out.Integer(e.samples.back().ms);
    ctx.out.Integer(e.max_ms);
  }
}

const LatencyEvent* FindEvent(const std::vector<LatencyEvent>& events, std::string_view name) {
  for (const LatencyEvent& e : events) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

// LATENCY HISTORY event: [time, latency] per sample, oldest first; empty for no samples.
void LatencyHistoryCommand(CommandContext& ctx) {
  const std::vector<LatencyEvent> events = ctx.server.latency_monitor->Events();
  const LatencyEvent* e = FindEvent(events, ctx.arg(2));
  ctx.out.ArrayHeader(e == nullptr ? 0 : e->samples.size());
  if (e == nullptr) return;
  for (const LatencySample& s : e->samples) {
    ctx.out.ArrayHeader(2);
    ctx.out.Integer(s.unix_seconds);
    ctx.out.Integer(s.ms);
  }
}

void LatencyResetCommand(CommandContext& ctx) {
  std::vector<std::string_view> names(ctx.args.begin() + 2, ctx.args.end());
  ctx.out.Integer(static_cast<std::int64_t>(ctx.server.latency_monitor->Reset(names)));
}

void LatencyGraphCommand(CommandContext& ctx) {
  const std::vector<LatencyEvent> events = ctx.server.latency_monitor->Events();
  if (FindEvent(events, ctx.arg(2)) == nullptr) {
    return ctx.out.Error("ERR No samples available for event '" +
                         std::string(protocol::ErrorArg(ctx.arg(2))) + "'");
  }
  ctx.out.Error("ERR LATENCY GRAPH is not supported by latchd: LATENCY HISTORY " +
                std::string(ctx.arg(2)) + " returns the same samples");
}

void LatencyDoctorCommand(CommandContext& ctx) {
  ctx.out.Verbatim(LatencyDoctorReport(
      ctx.server.latency_monitor->Events(),
      ctx.server.latency_monitor_threshold.load(std::memory_order_relaxed)));
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

constexpr SubcommandFamily kLatencySub{.container = "latency",
                                       .flags = kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale,
                                       .group = "server",
                                       .since = "2.8.13"};

}  // namespace

void RegisterLatencyCommands(CommandTable& t) {
  CommandSpec latency{.name = "latency",
                      .arity = -2,
                      .flags = 0,
                      .group = "server",
                      .summary = "A container for latency diagnostics commands.",
                      .since = "2.8.13"};
  latency.subcommands.push_back(kLatencySub("latest", 2, LatencyLatestCommand,
                                            "Returns the latest latency samples for all events."));
  latency.subcommands.push_back(kLatencySub("history", 3, LatencyHistoryCommand,
                                            "Returns timestamp-latency samples for an event."));
  latency.subcommands.push_back(kLatencySub("reset", -2, LatencyResetCommand,
                                            "Resets the latency data for one or more events."));
  latency.subcommands.push_back(
      kLatencySub("graph", 3, LatencyGraphCommand, "Returns a latency graph for an event."));
  latency.subcommands.push_back(kLatencySub("doctor", 2, LatencyDoctorCommand,
                                            "Returns a human-readable latency analysis report."));
  latency.subcommands.push_back(kLatencySub("histogram", -2, LatencyHistogramCommand,
                                            "Returns the cumulative distribution of latencies of a "
                                            "subset or all commands."));
  latency.subcommands.back().since = "7.0.0";
  latency.subcommands.push_back(kLatencySub(
      "help", 2, LatencyHelpCommand, "Returns helpful text about the different subcommands."));
  t.Add(std::move(latency));
}

}  // namespace latch
