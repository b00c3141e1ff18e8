// SENTINEL: every cluster node answers Redis Sentinel's discovery commands for one master,
// named by raft-sentinel-name (default "latch"), whose address is the Raft leader's client
// port (docs/CLUSTER.md, "Sentinel discovery"). A client given the nodes as its sentinels
// (redis-py's Sentinel(...).master_for, ioredis's `sentinels` + `name`) then finds the leader
// and, after a failover, the next one. Field names and errors are Sentinel 7.0's; values that
// have no Raft meaning are Sentinel's idle defaults (0, "?"), and an instance's runid is its
// Raft id in 40 hex digits (a node knows no other node's INFO run_id).
//
// A single latchd (no raft-peers) is no sentinel: every SENTINEL subcommand answers Redis's
// unknown-command error, as a redis-server that is not a sentinel does.
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cluster_node.h"
#include "commands/arg_parse.h"
#include "commands/command_table.h"
#include "commands/context.h"
#include "commands/subcommand.h"
#include "commands/unknown_command.h"
#include "server_state.h"

namespace latch {
namespace {

using cluster::ClusterView;

constexpr std::string_view kNoSuchMaster = "ERR No such master with that name";

std::string SentinelRunId(std::uint64_t raft_id) {
  char text[41];
  std::snprintf(text, sizeof text, "%040" PRIx64, raft_id);
  return text;
}

// The cluster's view, or false after answering: a single node is no sentinel.
bool SentinelView(CommandContext& ctx, ClusterView* view) {
  if (cluster::View(ctx.server, view)) return true;
  ctx.out.Error(UnknownCommandError(ctx.args));
  return false;
}

// The view, when `name` (the subcommand's argument) is this cluster's master name; else
// false (the reply is the caller's: nil or kNoSuchMaster).
bool NamedMaster(CommandContext& ctx, ClusterView* view, bool* answered) {
  *answered = !SentinelView(ctx, view);
  if (*answered) return false;
  std::lock_guard lock(ctx.server.options_mu);
  return ctx.arg(2) == ctx.server.options.raft_sentinel_name;
}

// Sentinel writes each instance as field/value pairs (a map in RESP3).
class Fields {
 public:
  explicit Fields(CommandContext& ctx) : ctx_(ctx) {}
  Fields& Add(std::string_view field, std::string_view value) {
    pairs_.emplace_back(field, std::string(value));
    return *this;
  }
  Fields& Add(std::string_view field, std::int64_t value) {
    return Add(field, std::string_view(std::to_string(value)));
  }
  void Write() {
    ctx_.out.MapHeader(pairs_.size());
    for (const auto& [field, value] : pairs_) {
      ctx_.out.Bulk(field);
      ctx_.out.Bulk(value);
    }
  }

 private:
  CommandContext& ctx_;
  std::vector<std::pair<std::string_view, std::string>> pairs_;
};

// The fields every instance starts with: this node's link to it is idle, never pending.
void LinkFields(Fields& f, std::string_view name, const ClusterView::Member* m,
                std::string_view flags, const ClusterView& v) {
  f.Add("name", name)
      .Add("ip", m != nullptr ? std::string_view(m->host) : "?")
      .Add("port", m != nullptr ? m->port : 0)
      .Add("runid", m != nullptr ? SentinelRunId(m->id) : "")
      .Add("flags", flags)
      .Add("link-pending-commands", 0)
      .Add("link-refcount", 1)
      .Add("last-ping-sent", 0)
      .Add("last-ok-ping-reply", m != nullptr ? m->lag_s * 1000 : 0)
      .Add("last-ping-reply", m != nullptr ? m->lag_s * 1000 : 0)
      .Add("down-after-milliseconds", v.election_timeout_ms);
}

// The replicas Sentinel would list: every member but the leader.
std::vector<const ClusterView::Member*> Replicas(const ClusterView& v) {
  std::vector<const ClusterView::Member*> out;
  for (const auto& m : v.members) {
    if (!m.leader) out.push_back(&m);
  }
  return out;
}

// The master: the leader; while none is known, "s_down,o_down" (redis-py then asks the next
// node) at address "?" port 0.
void WriteMaster(CommandContext& ctx, const ClusterView& v, std::string_view name) {
  const ClusterView::Member* leader = v.leader();
  Fields f(ctx);
  LinkFields(f, name, leader, leader != nullptr ? "master" : "master,s_down,o_down", v);
  f.Add("info-refresh", 0)
      .Add("role-reported", "master")
      .Add("role-reported-time", 0)
      .Add("config-epoch", static_cast<std::int64_t>(v.term))
      .Add("num-slaves", static_cast<std::int64_t>(Replicas(v).size()))
      .Add("num-other-sentinels", static_cast<std::int64_t>(v.members.size()) - 1)
      .Add("quorum", static_cast<std::int64_t>(v.members.size() / 2 + 1))
      .Add("failover-timeout", v.election_timeout_ms)
      .Add("parallel-syncs", 1)
      .Write();
}

void WriteReplica(CommandContext& ctx, const ClusterView& v, const ClusterView::Member& m) {
  const ClusterView::Member* leader = v.leader();
  const bool link_ok = m.online && leader != nullptr;
  Fields f(ctx);
  LinkFields(f, m.host + ":" + std::to_string(m.port), &m, m.online ? "slave" : "slave,s_down", v);
  f.Add("info-refresh", 0)
      .Add("role-reported", "slave")
      .Add("role-reported-time", 0)
      .Add("master-link-down-time", 0)
      .Add("master-link-status", link_ok ? "ok" : "err")
      .Add("master-host", leader != nullptr ? std::string_view(leader->host) : "?")
      .Add("master-port", leader != nullptr ? leader->port : 0)
      .Add("slave-priority", 100)
      .Add("slave-repl-offset", static_cast<std::int64_t>(m.offset))
      .Add("replica-announced", 1)
      .Write();
}

// The other nodes, each a sentinel of the same master (ioredis adds them to its list).
void WriteSentinel(CommandContext& ctx, const ClusterView& v, const ClusterView::Member& m) {
  const std::string runid = SentinelRunId(m.id);
  Fields f(ctx);
  LinkFields(f, runid, &m, m.online ? "sentinel" : "sentinel,s_down,disconnected", v);
  f.Add("last-hello-message", 0).Add("voted-leader", "?").Add("voted-leader-epoch", 0).Write();
}

void SentinelMastersCommand(CommandContext& ctx) {
  ClusterView v;
  if (!SentinelView(ctx, &v)) return;
  std::string name;
  {
    std::lock_guard lock(ctx.server.options_mu);
    name = ctx.server.options.raft_sentinel_name;
  }
  ctx.out.ArrayHeader(1);
  WriteMaster(ctx, v, name);
}

void SentinelMasterCommand(CommandContext& ctx) {
  ClusterView v;
  bool answered;
  if (!NamedMaster(ctx, &v, &answered)) {
    if (!answered) ctx.out.Error(kNoSuchMaster);
    return;
  }
  WriteMaster(ctx, v, ctx.arg(2));
}

// What ioredis asks: the leader's address, nil for another name and while none is known (it
// then asks the next sentinel).
void SentinelGetMasterAddrCommand(CommandContext& ctx) {
  ClusterView v;
  bool answered;
  const bool named = NamedMaster(ctx, &v, &answered);
  if (answered) return;
  const ClusterView::Member* leader = named ? v.leader() : nullptr;
  if (leader == nullptr) return ctx.out.NullArray();
  ctx.out.ArrayHeader(2);
  ctx.out.Bulk(leader->host);
  ctx.out.Bulk(std::to_string(leader->port));
}

void SentinelReplicasCommand(CommandContext& ctx) {
  ClusterView v;
  bool answered;
  if (!NamedMaster(ctx, &v, &answered)) {
    if (!answered) ctx.out.Error(kNoSuchMaster);
    return;
  }
  const auto replicas = Replicas(v);
  ctx.out.ArrayHeader(replicas.size());
  for (const auto* m : replicas) WriteReplica(ctx, v, *m);
}

void SentinelSentinelsCommand(CommandContext& ctx) {
  ClusterView v;
  bool answered;
  if (!NamedMaster(ctx, &v, &answered)) {
    if (!answered) ctx.out.Error(kNoSuchMaster);
    return;
  }
  ctx.out.ArrayHeader(v.members.size() - 1);
  for (const auto& m : v.members) {
    if (!m.self) WriteSentinel(ctx, v, m);
  }
}

void SentinelMyIdCommand(CommandContext& ctx) {
  ClusterView v;
  if (!SentinelView(ctx, &v)) return;
  ctx.out.Bulk(SentinelRunId(v.self_id));
}

void SentinelHelpCommand(CommandContext& ctx) {
  ClusterView v;
  if (!SentinelView(ctx, &v)) return;
  static constexpr std::string_view kLines[] = {
      "SENTINEL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "GET-MASTER-ADDR-BY-NAME <master-name>",
      "    Return the ip and port number of the master with that name.",
      "MASTER <master-name>",
      "    Show the state and info of the specified master.",
      "MASTERS",
      "    Show a list of monitored masters and their state.",
      "MYID",
      "    Return the ID of the Sentinel instance.",
      "REPLICAS <master-name>",
      "    Show a list of replicas for this master and their state.",
      "SENTINELS <master-name>",
      "    Show a list of Sentinel instances for this master and their state.",
      "HELP",
      "    Prints this help.",
  };
  WriteHelpLines(ctx.out, kLines);
}

constexpr SubcommandFamily kSentinelSub{.container = "sentinel",
                                        .flags = kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale,
                                        .group = "sentinel",
                                        .since = "2.8.4"};

}  // namespace

void RegisterSentinelCommands(CommandTable& t) {
  CommandSpec sentinel{.name = "sentinel",
                       .arity = -2,
                       .flags = kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale,
                       .group = "sentinel",
                       .summary = "A container for Redis Sentinel commands.",
                       .since = "2.8.4"};
  auto& subs = sentinel.subcommands;
  subs.push_back(kSentinelSub("get-master-addr-by-name", 3, SentinelGetMasterAddrCommand,
                              "Returns the port and address of a master instance."));
  subs.push_back(
      kSentinelSub("masters", 2, SentinelMastersCommand, "Returns a list of monitored masters."));
  subs.push_back(
      kSentinelSub("master", 3, SentinelMasterCommand, "Returns the state of a master instance."));
  subs.push_back(kSentinelSub("replicas", 3, SentinelReplicasCommand,
                              "Returns a list of the monitored replicas.", "5.0.0"));
  subs.push_back(kSentinelSub("slaves", 3, SentinelReplicasCommand,
                              "Returns a list of the monitored replicas."));
  subs.push_back(kSentinelSub("sentinels", 3, SentinelSentinelsCommand,
                              "Returns a list of Sentinel instances."));
  subs.push_back(kSentinelSub("myid", 2, SentinelMyIdCommand,
                              "Returns the Redis Sentinel instance ID.", "6.2.0"));
  subs.push_back(kSentinelSub("help", 2, SentinelHelpCommand,
                              "Returns helpful text about the different subcommands."));
  t.Add(std::move(sentinel));
}

}  // namespace latch
