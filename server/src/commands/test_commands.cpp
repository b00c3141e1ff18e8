// TEST.CLOCK / TEST.FAULT / TEST.COUNTS / TEST.RESET: the test kit's controls for suites in any
// language (docs/TESTING.md). They exist only in test mode (latchd --enable-test-commands yes,
// loopback only; ScopedServer); otherwise every one answers kDisabled, so that a production
// server can never be told to fail or to move its clock.
//
//   TEST.CLOCK ADVANCE <ms> | STEPWALL <ms> | GET
//   TEST.FAULT ERROR <message> | TIMEOUT | DROP | DELAY <ms>   [COMMAND <name>] [KEY <pattern>]
//              [COUNT <n, 0 = until cleared>] [PROBABILITY <0..1>] [SEED <n>]   -> rule id
//   TEST.FAULT PAUSE <ms> | CLEAR
//   TEST.FAULT STALL <journal-append | journal-write> <max-ms> [KEY <pattern>] [COUNT <n>]
//                                                                                -> stall id
//   TEST.FAULT RESUME     -> OK: stalled threads go on, stalls disarmed (CLEAR does it too)
//   TEST.FAULT RAFT-DROP [IN | OUT] ALL | <id> [<id> ...]  -> OK: a cluster node's Raft
//              messages to and from those peers are dropped (a partition of this node;
//              docs/CLUSTER.md); IN: only those it receives, OUT: only those it sends
//   TEST.FAULT RAFT-HEAL  -> OK: the Raft link is whole again (CLEAR does it too)
//   TEST.COUNTS           -> map: command name -> times run (test mode counts them)
//   TEST.RESET            -> faults cleared (Raft link healed), counters zeroed, keys flushed
//   TEST.LOCAL-EXISTS key [key ...] -> how many of the keys exist in this node's own keyspace
//              (the session's database, every shard held), whatever its Raft role: a
//              follower's state as applied, which its clients never read (docs/CLUSTER.md)
#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "cluster_node.h"
#include "commands/arg_parse.h"
#include "commands/clock_advance.h"
#include "commands/command_table.h"
#include "commands/errors.h"
#include "commands/key_lock.h"
#include "latch/protocol/error_arg.h"

namespace latch {
namespace {

constexpr std::string_view kDisabled =
    "ERR TEST commands are disabled; start latchd with --enable-test-commands yes";

bool Enabled(CommandContext& ctx) {
  if (ctx.server.faults.test_mode()) return true;
  ctx.out.Error(kDisabled);
  return false;
}

void SyntaxError(CommandContext& ctx) { ctx.out.Error(errors::kSyntax); }

void ClockCommand(CommandContext& ctx) {
  if (!Enabled(ctx)) return;
  const std::string_view sub = ctx.arg(1);
  if (EqualsNoCase(sub, "get") && ctx.argc() == 2) {
    const TimeSnapshot now = ctx.server.clock->Now();
    ctx.out.MapHeader(3);
    ctx.out.Bulk("mono_ms");
    ctx.out.Integer(now.mono_ms);
    ctx.out.Bulk("wall_ms");
    ctx.out.Integer(now.wall_ms);
    ctx.out.Bulk("manual");
    ctx.out.Integer(ManualClockOf(ctx.server) != nullptr ? 1 : 0);
    return;
  }
  const bool advance = EqualsNoCase(sub, "advance");
  if ((!advance && !EqualsNoCase(sub, "stepwall")) || ctx.argc() != 3) return SyntaxError(ctx);
  std::int64_t ms;
  if (!ParseInt64(ctx.arg(2), &ms)) return ctx.out.Error(errors::kNotInteger);
  const std::optional<std::string> error =
      advance ? AdvanceClock(ctx.server, ms) : StepWallClock(ctx.server, ms);
  if (error) return ctx.out.Error(*error);
  ctx.out.Ok();
}

// The options after the action's own arguments; false (and the error written) when bad.
bool ParseRuleOptions(CommandContext& ctx, std::size_t i, testing::FaultRule* rule) {
  for (; i < ctx.argc(); i += 2) {
    const std::string_view name = ctx.arg(i);
    if (i + 1 >= ctx.argc()) return SyntaxError(ctx), false;
    const std::string_view value = ctx.arg(i + 1);
    std::int64_t n = 0;
    if (EqualsNoCase(name, "command")) {
      rule->command = std::string(value);
      for (char& c : rule->command) c = AsciiLower(c);
    } else if (EqualsNoCase(name, "key")) {
      rule->key_pattern = std::string(value);
    } else if (EqualsNoCase(name, "count") || EqualsNoCase(name, "seed")) {
      if (!ParseInt64(value, &n) || n < 0) return ctx.out.Error(errors::kNotInteger), false;
      if (EqualsNoCase(name, "count")) {
        rule->count = n;
      } else {
        rule->seed = static_cast<std::uint64_t>(n);
      }
    } else if (EqualsNoCase(name, "probability")) {
      const std::string text(value);
      char* end = nullptr;
      const double p = std::strtod(text.c_str(), &end);
      if (text.empty() || end != text.c_str() + text.size() || !(p >= 0.0 && p <= 1.0)) {
        return ctx.out.Error("ERR PROBABILITY must be a number from 0 to 1"), false;
      }
      rule->probability = p;
    } else {
      return SyntaxError(ctx), false;
    }
  }
  return true;
}

// TEST.FAULT STALL point max-ms [KEY pattern] [COUNT n]: a thread that reaches the point
// stops there (fault_injector.h); max-ms bounds the stop when nobody resumes it.
void StallCommand(CommandContext& ctx) {
  if (ctx.argc() < 4) return SyntaxError(ctx);
  const std::optional<testing::StallPoint> point = testing::StallPointNamed(ctx.arg(2));
  if (!point) return ctx.out.Error("ERR unknown stall point, try journal-append or journal-write");
  std::int64_t max_ms = 0;
  if (!ParseInt64(ctx.arg(3), &max_ms) || max_ms <= 0) return ctx.out.Error(errors::kNotInteger);
  testing::FaultRule options;  // only KEY and COUNT apply to a stall
  if (!ParseRuleOptions(ctx, 4, &options)) return;
  if (!options.command.empty() || options.probability != 1.0 || options.seed != 0) {
    return ctx.out.Error("ERR STALL takes only KEY and COUNT");
  }
  ctx.out.Integer(static_cast<std::int64_t>(
      ctx.server.faults.ArmStall(*point, options.key_pattern, options.count, max_ms)));
}

// TEST.FAULT RAFT-DROP [IN|OUT] ALL | id [id ...]: each id must be another member of the
// configuration this node knows (RAFT STATUS's members), so that a typo does not leave the
// link whole.
void RaftDropCommand(CommandContext& ctx) {
  std::size_t first = 2;
  bool in = true, out = true;
  if (ctx.argc() > 2 && EqualsNoCase(ctx.arg(2), "in")) {
    out = false;
    ++first;
  } else if (ctx.argc() > 2 && EqualsNoCase(ctx.arg(2), "out")) {
    in = false;
    ++first;
  }
  if (ctx.argc() <= first) return SyntaxError(ctx);
  cluster::RaftReport report;
  if (!cluster::Report(ctx.server, &report)) return ctx.out.Error(errors::kClusterDisabled);
  const bool all = ctx.argc() == first + 1 && EqualsNoCase(ctx.arg(first), "all");
  std::vector<std::uint64_t> peers;
  for (std::size_t i = first; !all && i < ctx.argc(); ++i) {
    std::int64_t id = 0;
    if (!ParseInt64(ctx.arg(i), &id) || id <= 0) return ctx.out.Error(errors::kNotInteger);
    const auto peer = static_cast<std::uint64_t>(id);
    const bool member = std::any_of(report.members.begin(), report.members.end(),
                                    [&](const auto& m) { return m.id == peer; });
    if (!member) return ctx.out.Error("ERR Unknown node " + std::to_string(id));
    if (peer == report.id) {
      return ctx.out.Error("ERR Node " + std::to_string(id) + " is this node");
    }
    peers.push_back(peer);
  }
  cluster::DropRaftLinks(ctx.server, all, std::move(peers), in, out);
  ctx.out.Ok();
}

void FaultCommand(CommandContext& ctx) {
  if (!Enabled(ctx)) return;
  const std::string_view sub = ctx.arg(1);
  testing::FaultInjector& faults = ctx.server.faults;
  if (EqualsNoCase(sub, "clear") && ctx.argc() == 2) {
    faults.Clear();
    cluster::HealRaftLinks(ctx.server);  // false on a single node: nothing to heal
    return ctx.out.Ok();
  }
  if (EqualsNoCase(sub, "raft-drop")) return RaftDropCommand(ctx);
  if (EqualsNoCase(sub, "raft-heal")) {
    if (ctx.argc() != 2) return SyntaxError(ctx);
    if (!cluster::HealRaftLinks(ctx.server)) return ctx.out.Error(errors::kClusterDisabled);
    return ctx.out.Ok();
  }
  if (EqualsNoCase(sub, "resume") && ctx.argc() == 2) {
    faults.Resume();
    return ctx.out.Ok();
  }
  if (EqualsNoCase(sub, "stall")) return StallCommand(ctx);
  std::int64_t ms = 0;
  if (EqualsNoCase(sub, "pause")) {
    if (ctx.argc() != 3) return SyntaxError(ctx);
    if (!ParseInt64(ctx.arg(2), &ms) || ms < 0) return ctx.out.Error(errors::kNotInteger);
    faults.Pause(ms);
    return ctx.out.Ok();
  }
  testing::FaultRule rule;
  std::size_t next = 2;
  if (EqualsNoCase(sub, "error")) {
    if (ctx.argc() < 3) return SyntaxError(ctx);
    rule.action = testing::FaultAction::kError;
    rule.error = std::string(ctx.arg(2));
    if (rule.error.empty()) return ctx.out.Error("ERR the error message is empty");
    next = 3;
  } else if (EqualsNoCase(sub, "timeout")) {
    rule.action = testing::FaultAction::kTimeout;
  } else if (EqualsNoCase(sub, "drop")) {
    rule.action = testing::FaultAction::kDropReply;
  } else if (EqualsNoCase(sub, "delay")) {
    if (ctx.argc() < 3) return SyntaxError(ctx);
    if (!ParseInt64(ctx.arg(2), &ms) || ms <= 0) return ctx.out.Error(errors::kNotInteger);
    rule.action = testing::FaultAction::kDelay;
    rule.delay_ms = ms;
    next = 3;
  } else {
    return ctx.out.Error("ERR unknown subcommand '" +
                         std::string(protocol::ErrorArg(sub).substr(0, 128)) +
                         "'. Try ERROR, TIMEOUT, DROP, DELAY, PAUSE, STALL, RESUME, RAFT-DROP, "
                         "RAFT-HEAL or CLEAR.");
  }
  if (!ParseRuleOptions(ctx, next, &rule)) return;
  ctx.out.Integer(static_cast<std::int64_t>(faults.Arm(std::move(rule))));
}

void CountsCommand(CommandContext& ctx) {
  if (!Enabled(ctx)) return;
  const auto counts = ctx.server.faults.command_counts();
  ctx.out.MapHeader(counts.size());
  for (const auto& [name, n] : counts) {
    ctx.out.Bulk(name);
    ctx.out.Integer(static_cast<std::int64_t>(n));
  }
}

// Not flagged readonly, so neither relayed to the leader nor refused on a follower; every
// shard of the database is held, so the count is of one state between two applied entries.
void LocalExistsCommand(CommandContext& ctx) {
  if (!Enabled(ctx)) return;
  store::Keyspace& ks = ctx.db();
  ShardSet all;
  if (!all.LockAll(ks, GiveUpFlag(ctx))) return ctx.out.Error(errors::kBusyScript);
  std::int64_t found = 0;
  for (std::size_t i = 1; i < ctx.argc(); ++i) {
    const KeyRef k = Resolve(ks, ctx.arg(i));
    if (k.shard->Peek(k.key, k.hash, ctx.now.mono_ms) != nullptr) ++found;
  }
  ctx.out.Integer(found);
}

// The FLUSHALL runs as this command's origin does (under EXEC it must not lock the shards
// EXEC holds) and without a host, so that no fault or count applies to it.
void TestResetCommand(CommandContext& ctx) {
  if (!Enabled(ctx)) return;
  static constexpr std::string_view kFlush[] = {"FLUSHALL"};
  std::string scratch;
  protocol::ReplyWriter discard(&scratch, 2);
  CommandContext flush{kFlush, discard, ctx.session, ctx.server, ctx.now, nullptr, ctx.origin};
  ctx.server.commands->Dispatch(flush);
  ctx.server.faults.Reset();
  cluster::HealRaftLinks(ctx.server);
  ctx.out.Ok();
}

}  // namespace

void RegisterTestCommands(CommandTable& t) {
  constexpr std::uint32_t kFlags = kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale;
  t.Add({.name = "test.clock",
         .arity = -2,
         .flags = kFlags,
         .handler = ClockCommand,
         .group = "server",
         .summary = "Moves or reads the manual clock (test mode only).",
         .since = "0.1.0"});
  t.Add({.name = "test.fault",
         .arity = -2,
         .flags = kFlags,
         .handler = FaultCommand,
         .group = "server",
         .summary = "Arms, pauses or clears injected faults (test mode only).",
         .since = "0.1.0"});
  t.Add({.name = "test.counts",
         .arity = 1,
         .flags = kFlags,
         .handler = CountsCommand,
         .group = "server",
         .summary = "Returns how many times each command ran (test mode only).",
         .since = "0.1.0"});
  t.Add({.name = "test.local-exists",
         .arity = -2,
         .flags = kFlags,
         .handler = LocalExistsCommand,
         .group = "server",
         .summary = "Counts the keys that exist in this node's own keyspace (test mode only).",
         .since = "0.1.0"});
  t.Add({.name = "test.reset",
         .arity = 1,
         .flags = kFlags,
         .handler = TestResetCommand,
         .group = "server",
         .summary = "Clears faults and counters and flushes every key (test mode only).",
         .since = "0.1.0"});
}

}  // namespace latch
