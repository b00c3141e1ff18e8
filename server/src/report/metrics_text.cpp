#include "report/metrics_text.h"

#include <cstdint>
#include <cstdio>
#include <string_view>

#include "cluster_node.h"
#include "report/redis_exporter_text.h"
#include "report/stats_registry.h"
#include "server_state.h"

namespace latch {
namespace {

void Header(std::string* out, std::string_view name, std::string_view type,
            std::string_view help) {
  out->append("# HELP ").append(name).append(" ").append(help).append("\n");
  out->append("# TYPE ").append(name).append(" ").append(type).append("\n");
}

void AppendValue(std::string* out, double value) {
  char buf[64];
  // Integral values (all of ours but uptime) print without a fraction.
  const auto whole = static_cast<std::int64_t>(value);
  const int n = static_cast<double>(whole) == value
                    ? std::snprintf(buf, sizeof(buf), "%lld", static_cast<long long>(whole))
                    : std::snprintf(buf, sizeof(buf), "%.3f", value);
  out->append(buf, static_cast<std::size_t>(n)).append("\n");
}

// A label value in the exposition format: backslash, quote and newline escaped.
void AppendLabelValue(std::string* out, std::string_view v) {
  for (char c : v) {
    if (c == '\\' || c == '"') out->push_back('\\');
    if (c == '\n') {
      out->append("\\n");
    } else {
      out->push_back(c);
    }
  }
}

// INFO errorstats as one counter with the error code as a label.
void AppendErrorCodes(std::string* out, ServerState& st) {
  constexpr std::string_view kName = "latch_error_replies_by_code_total";
  Header(out, kName, "counter", "Error replies sent, by error code (INFO errorstats).");
  st.stats.errors.ForEach([out, kName](std::string_view code, std::uint64_t count) {
    out->append(kName).append("{code=\"");
    AppendLabelValue(out, code);
    out->append("\"} ");
    AppendValue(out, static_cast<double>(count));
  });
}

// A cluster node's Raft state (docs/CLUSTER.md, "Metrics"); nothing on a single node.
void AppendRaftMetrics(std::string* out, const ServerState& st) {
  cluster::RaftReport r;
  if (!cluster::Report(st, &r)) return;
  auto gauge = [out](std::string_view name, std::string_view type, std::string_view help,
                     std::uint64_t value) {
    Header(out, name, type, help);
    out->append(name).append(" ");
    AppendValue(out, static_cast<double>(value));
  };
  gauge("latch_raft_term", "gauge", "The Raft term this node is in.", r.term);
  gauge("latch_raft_is_leader", "gauge",
        "1 while this node is the Raft leader and accepts writes, else 0.", r.serving ? 1 : 0);
  gauge("latch_raft_commit_index", "gauge", "The last Raft log index this node knows committed.",
        r.commit_index);
  gauge("latch_raft_applied_index", "gauge", "The last Raft log index applied on this node.",
        r.applied_index);
  gauge("latch_raft_leader_changes_total", "counter",
        "New Raft leaders (another node, or a new term) this node learnt of since it started.",
        r.leader_changes);
  constexpr std::string_view kMatch = "latch_raft_peer_match_index";
  Header(out, kMatch, "gauge",
         "On the leader: the last Raft log index each follower reported holding.");
  for (const auto& m : r.members) {
    if (!m.has_progress) continue;
    out->append(kMatch).append("{peer=\"").append(std::to_string(m.id)).append("\"} ");
    AppendValue(out, static_cast<double>(m.match_index));
  }
}

}  // namespace

std::string MetricsText(ServerState& st) {
  std::string s;
  for (const StatDef& d : StatDefs()) {
    if (d.metric.empty()) continue;
    Header(&s, d.metric, d.kind == StatKind::kCounter ? "counter" : "gauge", d.help);
    s.append(d.metric).append(" ");
    AppendValue(&s, static_cast<double>(d.read(st)) / d.metric_divisor);
  }
  AppendErrorCodes(&s, st);
  AppendRedisExporterMetrics(&s, st);  // redis_exporter's names, commands, lock histograms
  AppendRaftMetrics(&s, st);
  return s;
}

}  // namespace latch
