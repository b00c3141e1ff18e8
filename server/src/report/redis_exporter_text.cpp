#include "report/redis_exporter_text.h"

#include <cstdio>
#include <string_view>
#include <vector>

#include "catalogue/command_catalogue.h"
#include "metrics/command_stats.h"
#include "metrics/keyspace_info.h"
#include "metrics/lock_timings.h"
#include "report/stats_registry.h"
#include "server_state.h"

namespace latch {
namespace {

// INFO field -> redis_exporter's metric name (its metricMapGauges / metricMapCounters).
struct ExporterName {
  std::string_view info, metric, type;
};
constexpr ExporterName kNames[] = {
    {"connected_clients", "redis_connected_clients", "gauge"},
    {"blocked_clients", "redis_blocked_clients", "gauge"},
    {"maxclients", "redis_config_maxclients", "gauge"},
    {"used_memory", "redis_memory_used_bytes", "gauge"},
    {"used_memory_rss", "redis_memory_used_rss_bytes", "gauge"},
    {"maxmemory", "redis_memory_max_bytes", "gauge"},
    {"total_connections_received", "redis_connections_received_total", "counter"},
    {"total_commands_processed", "redis_commands_processed_total", "counter"},
    {"total_net_input_bytes", "redis_net_input_bytes_total", "counter"},
    {"total_net_output_bytes", "redis_net_output_bytes_total", "counter"},
    {"rejected_connections", "redis_rejected_connections_total", "counter"},
    {"expired_keys", "redis_expired_keys_total", "counter"},
    {"keyspace_hits", "redis_keyspace_hits_total", "counter"},
    {"keyspace_misses", "redis_keyspace_misses_total", "counter"},
};

void Sample(std::string* out, std::string_view name, std::string_view type, std::string_view help,
            const std::string& value) {
  out->append("# HELP ").append(name).append(" ").append(help).append("\n");
  out->append("# TYPE ").append(name).append(" ").append(type).append("\n");
  out->append(name).append(" ").append(value).append("\n");
}

std::string Seconds(std::uint64_t nanos) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.9f", static_cast<double>(nanos) / 1e9);
  return buf;
}

// redis_commands_total{cmd="get"} and its siblings, one family at a time as the format asks.
void AppendCommandFamilies(std::string* out, ServerState& st) {
  if (!st.command_stats || st.catalogue == nullptr) return;
  struct Row {
    std::string_view cmd;
    CommandTotals t;
  };
  std::vector<Row> rows;
  st.catalogue->ForEach([&](const CommandSpec& spec) {
    auto add = [&](const CommandSpec& s) {
      const CommandTotals t = st.command_stats->Totals(s.stat_id);
      if (t.calls != 0 || t.rejected != 0 || t.failed != 0) rows.push_back({s.name, t});
    };
    if (spec.IsContainer()) {
      for (const CommandSpec& sub : spec.subcommands) add(sub);
    } else {
      add(spec);
    }
  });
  struct Family {
    std::string_view name, help;
    std::string (*value)(const CommandTotals&);
  };
  static constexpr Family kFamilies[] = {
      {"redis_commands_total", "Total number of calls per command",
       [](const CommandTotals& t) { return std::to_string(t.calls); }},
      {"redis_commands_duration_seconds_total", "Total amount of time in seconds spent per command",
       [](const CommandTotals& t) { return Seconds(t.nanos); }},
      {"redis_commands_rejected_calls_total",
       "Total number of errors prior command execution per command",
       [](const CommandTotals& t) { return std::to_string(t.rejected); }},
      {"redis_commands_failed_calls_total",
       "Total number of errors within command execution per command",
       [](const CommandTotals& t) { return std::to_string(t.failed); }},
  };
  for (const Family& f : kFamilies) {
    out->append("# HELP ").append(f.name).append(" ").append(f.help).append("\n");
    out->append("# TYPE ").append(f.name).append(" counter\n");
    for (const Row& r : rows) {
      // Command names are lower-case letters, '|', '.', '-' and '_': nothing to escape.
      out->append(f.name).append("{cmd=\"").append(r.cmd).append("\"} ").append(f.value(r.t));
      out->append("\n");
    }
  }
}

}  // namespace

void AppendRedisExporterMetrics(std::string* out, ServerState& st) {
  Sample(out, "redis_up", "gauge", "Information about the Redis instance", "1");
  Sample(out, "redis_uptime_in_seconds", "gauge", "uptime_in_seconds metric",
         std::to_string((st.clock->MonoMs() - st.start_mono_ms) / 1000));
  for (const StatDef& d : StatDefs()) {
    for (const ExporterName& n : kNames) {
      if (d.info != n.info) continue;
      Sample(out, n.metric, n.type, std::string(n.info) + " metric", std::to_string(d.read(st)));
    }
  }
  AppendDbMetrics(st.dbs, out);
  AppendCommandFamilies(out, st);
  if (st.lock_timings) st.lock_timings->Append(out);
}

}  // namespace latch
