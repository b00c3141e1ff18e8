// RAFT: a cluster node's state and the operator's changes to it (docs/CLUSTER.md,
// "Membership and operations"). STATUS answers on every node; TRANSFER, ADD and REMOVE only on
// the leader, which answers once libraft settled the change (the client is parked meanwhile).
// A single latchd (no raft-peers) answers every subcommand as a Redis without cluster support
// answers CLUSTER.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cluster/raft_config.h"
#include "cluster_node.h"
#include "commands/arg_parse.h"
#include "commands/command_table.h"
#include "commands/context.h"
#include "commands/errors.h"
#include "commands/subcommand.h"
#include "config/raft_peers.h"
#include "server_state.h"

namespace latch {
namespace {

using cluster::RaftReport;

// The dispatcher's refusal while no leader is known (command_table.cpp, kNoLeader).
constexpr std::string_view kNoLeaderKnown = "TRYAGAIN no Raft leader is known, retry later";

// The subcommand in upper case, for error texts ("RAFT TRANSFER").
std::string RaftSubcommandName(const CommandContext& ctx) {
  std::string name(ctx.arg(1));
  for (char& c : name) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 32);
  }
  return name;
}

// The node's report, or false after answering: a single node has no cluster.
bool RaftReportOf(CommandContext& ctx, RaftReport* r) {
  if (cluster::Report(ctx.server, r)) return true;
  ctx.out.Error(errors::kClusterDisabled);
  return false;
}

void AppendField(std::string* out, std::string_view field, std::string_view value) {
  out->append(field).append(":").append(value).append("\r\n");
}
void AppendField(std::string* out, std::string_view field, std::uint64_t value) {
  AppendField(out, field, std::to_string(value));
}

// RAFT STATUS: "field:value" lines, as CLUSTER INFO and INFO write them (redis-cli prints them
// one a line); one "memberN:" line per member of the configuration, with the leader's view of
// it (match index, ms since last heard) on the leader only.
void RaftStatusCommand(CommandContext& ctx) {
  RaftReport r;
  if (!RaftReportOf(ctx, &r)) return;
  std::string s;
  AppendField(&s, "raft_id", r.id);
  AppendField(&s, "raft_role", r.role);
  AppendField(&s, "raft_serving", r.serving ? 1 : 0);
  AppendField(&s, "raft_term", r.term);
  AppendField(&s, "raft_leader_id", r.leader_id);
  AppendField(&s, "raft_leader_address", r.leader_address);
  AppendField(&s, "raft_commit_index", r.commit_index);
  AppendField(&s, "raft_applied_index", r.applied_index);
  AppendField(&s, "raft_last_index", r.last_index);
  AppendField(&s, "raft_snapshot_index", r.snapshot_index);
  AppendField(&s, "raft_leader_changes", r.leader_changes);
  AppendField(&s, "raft_members", r.members.size());
  for (std::size_t i = 0; i < r.members.size(); ++i) {
    const RaftReport::Member& m = r.members[i];
    std::string v = "id=" + std::to_string(m.id) + ",address=" + m.address + ",role=" + m.role +
                    ",self=" + (m.self ? "1" : "0");
    if (m.has_progress) {
      v += ",match_index=" + std::to_string(m.match_index) +
           ",last_heard_ms=" + std::to_string(m.last_heard_ms);
    }
    AppendField(&s, "member" + std::to_string(i), v);
  }
  ctx.out.Verbatim(s);
}

const RaftReport::Member* FindMember(const RaftReport& r, std::uint64_t id) {
  for (const auto& m : r.members) {
    if (m.id == id) return &m;
  }
  return nullptr;
}

// True on the serving leader; otherwise answers: TRYAGAIN while no leader is known, else an
// error that names the leader to send the change to (no forwarding for these).
bool OnLeader(CommandContext& ctx, const RaftReport& r) {
  if (r.serving) return true;
  if (r.leader_id == 0 || r.leader_id == r.id) {
    ctx.out.Error(kNoLeaderKnown);
    return false;
  }
  std::string where = "node " + std::to_string(r.leader_id);
  cluster::ClusterView view;
  if (cluster::View(ctx.server, &view)) {
    if (const auto* leader = view.leader()) {
      where += " at " + leader->host + ":" + std::to_string(leader->port);
    }
  }
  ctx.out.Error("ERR This node is not the Raft leader: send RAFT " + RaftSubcommandName(ctx) +
                " to the leader, " + where);
  return false;
}

// A node id: a positive integer, else Redis's integer error.
bool ParseNodeId(CommandContext& ctx, std::string_view arg, std::uint64_t* id) {
  std::int64_t v = 0;
  if (!ParseInt64(arg, &v) || v <= 0) {
    ctx.out.Error(errors::kNotInteger);
    return false;
  }
  *id = static_cast<std::uint64_t>(v);
  return true;
}

std::int64_t ElectionTimeoutMs(CommandContext& ctx) {
  cluster::ClusterView view;
  return cluster::View(ctx.server, &view) ? view.election_timeout_ms : 1000;
}

// Parks the client until `start`'s change is settled: +OK, or "-ERR RAFT <SUB> failed: why".
// False (after answering) where a client cannot be parked (MULTI).
template <class Start>
bool AwaitChange(CommandContext& ctx, std::int64_t timeout_ms, Start&& start) {
  const std::string what = "RAFT " + RaftSubcommandName(ctx);
  if (ctx.host == nullptr) {
    ctx.out.Error("ERR " + what + " can't be used in a transaction");
    return false;
  }
  std::shared_ptr<BlockedClient> blocked = ctx.host->Block(timeout_ms);
  blocked->on_timeout = [what](protocol::ReplyWriter& w) {
    w.Error("ERR " + what + " timed out; RAFT STATUS shows whether it took effect");
  };
  start([blocked, what](const std::string& error) {
    blocked->TryComplete([error, what](protocol::ReplyWriter& w) {
      if (error.empty()) return w.Ok();
      w.Error("ERR " + what + " failed: " + error);
    });
  });
  return true;
}

void RaftTransferCommand(CommandContext& ctx) {
  RaftReport r;
  if (!RaftReportOf(ctx, &r)) return;
  std::uint64_t id = 0;
  if (!ParseNodeId(ctx, ctx.arg(2), &id)) return;
  const RaftReport::Member* m = FindMember(r, id);
  if (m == nullptr) return ctx.out.Error("ERR Unknown node " + std::to_string(id));
  if (!OnLeader(ctx, r)) return;
  if (m->self) return ctx.out.Ok();  // leads already
  if (std::string_view(m->role) != "voter") {
    return ctx.out.Error("ERR Node " + std::to_string(id) + " is not a voter");
  }
  const std::int64_t client = ctx.session.info ? ctx.session.info->id : 0;
  AwaitChange(ctx, 2 * ElectionTimeoutMs(ctx) + 1000, [&](cluster::RaftChangeDone done) {
    cluster::Transfer(ctx.server, id, client, std::move(done));
  });
}

void RaftAddCommand(CommandContext& ctx) {
  RaftReport r;
  if (!RaftReportOf(ctx, &r)) return;
  std::uint64_t id = 0;
  if (!ParseNodeId(ctx, ctx.arg(2), &id)) return;
  std::vector<config::PeerSpec> spec;
  const std::string address(ctx.arg(3));
  std::string ip;
  if (config::ParsePeers(std::to_string(id) + "=" + address, &spec) || spec.size() != 1 ||
      cluster::ResolveRaftHost(spec[0].host, &ip)) {
    return ctx.out.Error("ERR Invalid node address specified: " + address +
                         " (expected HOST:RAFTPORT:CLIENTPORT, HOST an IPv4 address or name)");
  }
  const std::string raft_address = ip + ":" + std::to_string(spec[0].raft_port);
  if (FindMember(r, id) != nullptr) {
    return ctx.out.Error("ERR Node " + std::to_string(id) + " is already a member");
  }
  for (const auto& m : r.members) {
    if (m.address == raft_address) {
      return ctx.out.Error("ERR Raft address " + raft_address + " is node " + std::to_string(m.id) +
                           "'s");
    }
  }
  if (!OnLeader(ctx, r)) return;
  // Catching a new node up can take a while (libraft sends it the log in rounds).
  AwaitChange(ctx, 30000 + 2 * ElectionTimeoutMs(ctx), [&](cluster::RaftChangeDone done) {
    cluster::AddMember(ctx.server, id, raft_address, spec[0].host, spec[0].client_port,
                       std::move(done));
  });
}

void RaftRemoveCommand(CommandContext& ctx) {
  RaftReport r;
  if (!RaftReportOf(ctx, &r)) return;
  std::uint64_t id = 0;
  if (!ParseNodeId(ctx, ctx.arg(2), &id)) return;
  const RaftReport::Member* m = FindMember(r, id);
  if (m == nullptr) return ctx.out.Error("ERR Unknown node " + std::to_string(id));
  if (!OnLeader(ctx, r)) return;
  if (m->self) {
    return ctx.out.Error("ERR Can't remove the leader: move leadership with RAFT TRANSFER first");
  }
  AwaitChange(ctx, 5000 + 2 * ElectionTimeoutMs(ctx), [&](cluster::RaftChangeDone done) {
    cluster::RemoveMember(ctx.server, id, std::move(done));
  });
}

void RaftHelpCommand(CommandContext& ctx) {
  static constexpr std::string_view kLines[] = {
      "RAFT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "STATUS",
      "    This node's Raft state: role, term, leader, indexes, and the members.",
      "TRANSFER <id>",
      "    Hand leadership to voter <id> (on the leader).",
      "ADD <id> <host>:<raftport>:<clientport>",
      "    Add a node (started with raft-addr and an id not in raft-peers) as a voter.",
      "REMOVE <id>",
      "    Remove a node from the configuration (on the leader).",
      "HELP",
      "    Prints this help.",
  };
  WriteHelpLines(ctx.out, kLines);
}

constexpr SubcommandFamily kRaftSub{.container = "raft",
                                    .flags = kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale,
                                    .group = "cluster",
                                    .since = "7.0.0"};

}  // namespace

void RegisterRaftCommands(CommandTable& t) {
  CommandSpec raft{.name = "raft",
                   .arity = -2,
                   .flags = kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale,
                   .group = "cluster",
                   .summary = "A container for Raft cluster commands (latch).",
                   .since = "7.0.0"};
  auto& subs = raft.subcommands;
  subs.push_back(kRaftSub("status", 2, RaftStatusCommand, "Returns this node's Raft state."));
  subs.push_back(kRaftSub("transfer", 3, RaftTransferCommand, "Hands leadership to a voter."));
  subs.push_back(kRaftSub("add", 4, RaftAddCommand, "Adds a node to the cluster as a voter."));
  subs.push_back(kRaftSub("remove", 3, RaftRemoveCommand, "Removes a node from the cluster."));
  subs.push_back(kRaftSub("help", 2, RaftHelpCommand,
                          "Returns helpful text about the different subcommands."));
  t.Add(std::move(raft));
}

}  // namespace latch
