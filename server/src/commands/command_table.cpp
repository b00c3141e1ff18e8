#include "commands/command_table.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

#include "cluster_node.h"
#include "commands/acl_gate.h"
#include "commands/arg_parse.h"
#include "commands/client_pause.h"
#include "commands/command_record.h"
#include "commands/dispatch_fast_path.h"
#include "commands/errors.h"
#include "commands/key_lock.h"
#include "commands/transaction_commands.h"
#include "commands/unknown_command.h"
#include "journal/reply_log.h"
#include "journal/server_hooks.h"
#include "latch/protocol/error_arg.h"

namespace latch {

// Families added for Redis's own test files (docs/REDIS_TESTS.md); declared here, not in
// command_table.h, so that adding one rebuilds this file only.
void RegisterRandomMemberCommands(CommandTable& t);  // random_member_commands.cpp
void RegisterZSetStoreCommands(CommandTable& t);     // zset_setop_commands.cpp: ZUNION...
void RegisterBitCommands(CommandTable& t);           // bit_commands.cpp: SETBIT, GETBIT
void RegisterLcsCommand(CommandTable& t);            // lcs_command.cpp
// BGREWRITEAOF (persistence_commands.cpp), registered where journal/ registered it before.
void RegisterPersistenceCommands(CommandTable& t);
void RegisterSentinelCommands(CommandTable& t);  // sentinel_commands.cpp: cluster discovery
void RegisterRaftCommands(CommandTable& t);      // raft_commands.cpp: RAFT STATUS, TRANSFER...

namespace {

bool ArityOk(int arity, std::size_t argc) {
  if (arity > 0) return argc == static_cast<std::size_t>(arity);
  return argc >= static_cast<std::size_t>(-arity);
}

}  // namespace

std::string UnknownCommandError(std::span<const std::string_view> args) {
  std::string msg = "ERR unknown command '";
  msg.append(protocol::ErrorArg(args[0]).substr(0, 128));
  msg.append("', with args beginning with: ");
  std::string list;
  for (std::size_t i = 1; i < args.size() && list.size() < 128; ++i) {
    std::size_t room = 128 - list.size();
    list.push_back('\'');
    list.append(protocol::ErrorArg(args[i]).substr(0, room));
    list.append("' ");
  }
  msg.append(list);
  return msg;
}

CommandTable::CommandTable() {
  RegisterConnectionCommands(*this);
  RegisterStringCommands(*this);
  RegisterKeyCommands(*this);
  RegisterExpireCommands(*this);
  RegisterServerCommands(*this);
  RegisterIntrospectionCommands(*this);
  RegisterLockCommands(*this);
  RegisterCompareCommands(*this);
  RegisterTransactionCommands(*this);
  RegisterScriptingCommands(*this);
  RegisterFunctionCommands(*this);
  RegisterPubsubCommands(*this);
  RegisterAclCommands(*this);
  RegisterHashCommands(*this);
  RegisterZSetCommands(*this);
  RegisterZSetRangeCommands(*this);
  RegisterStringEditCommands(*this);
  RegisterKeyMoveCommands(*this);
  RegisterDbCommands(*this);
  RegisterRandomMemberCommands(*this);
  RegisterZSetStoreCommands(*this);
  RegisterBitCommands(*this);
  RegisterLcsCommand(*this);
  RegisterPersistenceCommands(*this);
  RegisterTestCommands(*this);
  RegisterSlowlogCommands(*this);
  RegisterObjectCommands(*this);
  RegisterLatencyCommands(*this);
  RegisterMonitorCommand(*this);
  RegisterSentinelCommands(*this);
  RegisterRaftCommands(*this);
}

namespace {
// maxmemory (noeviction), as Redis: over the limit, commands that can grow memory are refused,
// and inside MULTI every command but EXEC, DISCARD, QUIT and RESET (a queue grows too). Only
// for a client's own command (EXEC checked its queue, a script checks its first write), and
// not while a script is busy (BUSY answers).
bool RefusedForMemory(const CommandSpec& spec, const CommandContext& ctx) {
  const std::string_view name = spec.name;
  const bool grows =
      (spec.flags & kCmdDenyOom) || (ctx.session.in_multi && name != "exec" && name != "discard" &&
                                     name != "quit" && name != "reset");
  if (!grows || ctx.origin != CommandOrigin::kClient ||
      ctx.server.script_busy.load(std::memory_order_relaxed)) {
    return false;
  }
  return ctx.server.OverMaxmemory();
}

// Redis's writeCommandsDeniedByDiskError: while the journal's last write or fdatasync failed
// (journal/journal.h), a client's writes are refused, and so are its PING and an EXEC whose
// queue writes; a script's writes too (its redis.call() comes through here). EXEC's own
// commands were checked with the EXEC. Nothing is refused while no journal is open.
// An EXEC whose queue holds a command with one of `flags`.
bool ExecQueues(const CommandSpec& spec, const CommandContext& ctx, std::uint32_t flags) {
  if (spec.name != "exec" || !ctx.session.in_multi) return false;
  const CommandTable& table = *ctx.server.commands;
  return std::any_of(ctx.session.queued.begin(), ctx.session.queued.end(), [&](const auto& cmd) {
    const CommandSpec* queued = table.FindCommand(cmd);
    return queued != nullptr && (queued->flags & flags);
  });
}
bool ExecQueuesWrite(const CommandSpec& spec, const CommandContext& ctx) {
  return ExecQueues(spec, ctx, kCmdWrite);
}

bool RefusedForDiskError(const CommandSpec& spec, const CommandContext& ctx) {
  if (ctx.origin == CommandOrigin::kExec) return false;
  if (spec.flags & kCmdWrite) return true;
  if (ctx.origin != CommandOrigin::kClient) return false;
  if (spec.name == "ping") return true;
  return ExecQueuesWrite(spec, ctx);
}

// A Raft follower (or a leader not ready to serve) refuses writes as a Redis read-only
// replica does (processCommand's is_write_command): a write command, from a client or a
// script's redis.call(), and an EXEC whose queue writes. It refuses reads too, with the same
// code, which Sentinel-aware clients take for "not the master": its keyspace may lag the
// leader's, and reads are linearizable (docs/CLUSTER.md). A client's connection normally never
// gets here: its first command that needs the leader relays it there (net/connection_relay.cpp);
// what remains is a session that began a MULTI, WATCH or subscription while no leader was
// known, and REST requests.
constexpr std::string_view kReadOnlyReplica =
    "READONLY You can't write against a read only replica.";
constexpr std::string_view kFollowerRead =
    "READONLY You can't read against a Raft follower: the leader answers reads.";
std::string_view RefusedOnFollower(const CommandSpec& spec, const CommandContext& ctx) {
  if (ctx.origin == CommandOrigin::kExec) return {};
  if ((spec.flags & kCmdWrite) || ExecQueuesWrite(spec, ctx)) return kReadOnlyReplica;
  if ((spec.flags & kCmdReadonly) || ExecQueues(spec, ctx, kCmdReadonly)) return kFollowerRead;
  return {};
}

// While a cluster node knows no leader (an election, a partition), what touches data (a write
// or a read: this node's keyspace may be behind) gets the error that Redis clients retry
// (docs/CLUSTER.md, "No leader"); connection, server and Sentinel commands answer as usual.
constexpr std::string_view kNoLeader = "TRYAGAIN no Raft leader is known, retry later";
bool NeedsLeader(const CommandSpec& spec, const CommandContext& ctx) {
  if (ctx.origin == CommandOrigin::kExec) return false;
  constexpr std::uint32_t kData = kCmdWrite | kCmdReadonly;
  return (spec.flags & kData) || ExecQueues(spec, ctx, kData);
}

std::string DiskErrorReply(int err) {
  return "MISCONF Errors writing to the AOF file: " + std::string(std::strerror(err));
}

// Redis 7.0's refusal of a command a RESP2 subscriber may not send.
std::string SubscriberContextError(std::string_view name) {
  return "ERR Can't execute '" + std::string(name) +
         "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this "
         "context";
}

// Answers a command refused before it runs; returns nullptr for Dispatch to return. An EXEC
// refused aborts its transaction. Redis builds its formatted refusals (wrong arity) without
// an error code and EXECABORT quotes them so; its shared ones (NOAUTH, BUSY, OOM) keep theirs.
const CommandSpec* Refuse(const CommandSpec& spec, CommandContext& ctx, std::string_view error) {
  RecordCommandRejected(spec, ctx);  // INFO commandstats rejected_calls
  if (spec.name == "exec") {
    if (error.starts_with("ERR ")) error.remove_prefix(4);
    AbortExec(ctx, error);
  } else {
    ctx.out.Error(error);
  }
  return nullptr;
}
}  // namespace

namespace {
// The keys a command names, from its legacy key positions: a view of the arguments when
// they are contiguous (key_step 1: DEL, MGET, EXISTS... with a million keys copy nothing),
// else copied into *copy.
std::span<const std::string_view> KeysOf(const CommandSpec& spec,
                                         std::span<const std::string_view> args,
                                         std::vector<std::string_view>* copy) {
  const auto first = static_cast<std::size_t>(spec.first_key);
  std::size_t last = spec.last_key < 0 ? args.size() + static_cast<std::size_t>(spec.last_key)
                                       : static_cast<std::size_t>(spec.last_key);
  last = std::min(last, args.size() - 1);
  if (last < first) return {};
  const std::size_t step = spec.key_step > 0 ? static_cast<std::size_t>(spec.key_step) : 1;
  if (step == 1) return args.subspan(first, last - first + 1);
  for (std::size_t i = first; i <= last; i += step) copy->push_back(args[i]);
  return *copy;
}

// One shard held for a single-key command: a try_lock and nothing to allocate or sort.
// Skipped (as ShardSet does) when this thread holds it already (EXEC, scripts).
class OneShardLock {
 public:
  OneShardLock() = default;
  ~OneShardLock() {
    if (held_ != nullptr) store::UnlockShard(*held_);
  }
  OneShardLock(const OneShardLock&) = delete;
  OneShardLock& operator=(const OneShardLock&) = delete;

  bool Lock(store::Shard& s, const std::atomic<bool>* give_up) {
    if (store::ThisThreadHolds(s)) return true;
    if (!store::LockShard(s, give_up)) return false;
    held_ = &s;
    return true;
  }

 private:
  store::Shard* held_ = nullptr;
};

// Several keys: each hashed once into KeyRefs, their shards held by a ShardSet.
[[gnu::noinline]] void RunMultiKey(const CommandSpec& spec, CommandContext& ctx) {
  std::vector<std::string_view> copy;
  KeyRefs refs;
  refs.Resolve(ctx.db(), KeysOf(spec, ctx.args, &copy));
  ShardSet held;
  if (!held.Lock(ctx.db(), refs.refs(), GiveUpFlag(ctx))) {
    ctx.out.Error(errors::kBusyScript);
    return;
  }
  ctx.keys = refs.refs();
  spec.handler(ctx);
}
}  // namespace

// The dispatcher knows a command's keys from the table: it hashes each once and holds their
// shards (ascending index) while the handler runs. A client's wait for a shard gives up
// when a script goes busy, and the client is answered BUSY (nothing ran). Writes report
// to WATCH, lock waiters and counters themselves, through the shards' key events. Inlined
// into Dispatch: most commands have no key or one.
[[gnu::always_inline]] inline void CommandTable::RunHandler(const CommandSpec& spec,
                                                            CommandContext& ctx) const {
  if (spec.first_key <= 0 || static_cast<std::size_t>(spec.first_key) >= ctx.argc() ||
      (spec.flags & kCmdOwnKeyLocks)) {
    spec.handler(ctx);
    return;
  }
  if (spec.last_key != spec.first_key) return RunMultiKey(spec, ctx);
  // Most commands (SET, GET, the lock commands): one key, resolved on the stack.
  const KeyRef ref = Resolve(ctx.db(), ctx.args[static_cast<std::size_t>(spec.first_key)]);
  OneShardLock held;
  if (!held.Lock(*ref.shard, GiveUpFlag(ctx))) {
    ctx.out.Error(errors::kBusyScript);
    return;
  }
  ctx.keys = std::span<const KeyRef>(&ref, 1);
  spec.handler(ctx);
}

namespace {
// The checks of a request Ordinary() could not clear, in Redis's order. Returns the command to
// run; or null, with *answer set to what Dispatch returns (null when refused; the command
// when it was postponed by CLIENT PAUSE, queued in MULTI or intercepted by a test fault).
const CommandSpec* CheckUnusual(const CommandSpec* spec, CommandContext& ctx,
                                CommandTable::Interceptor intercept, const CommandSpec** answer) {
  *answer = nullptr;
  // Inside MULTI, a command rejected here also dooms the transaction (EXECABORT).
  const bool was_error = ctx.session.multi_error;
  if (ctx.session.in_multi) ctx.session.multi_error = true;
  if (spec == nullptr) {
    ctx.out.Error(UnknownCommandError(ctx.args));
    return nullptr;
  }
  if (spec->IsContainer() && ctx.argc() >= 2) {
    const CommandSpec* sub = spec->FindSubcommand(ctx.args[1]);
    if (sub == nullptr) {
      std::string upper(ctx.args[0]);
      for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      std::string msg = "ERR unknown subcommand '";
      msg.append(protocol::ErrorArg(ctx.args[1]).substr(0, 128));
      msg.append("'. Try ");
      msg.append(upper);
      msg.append(" HELP.");
      ctx.out.Error(msg);
      return nullptr;
    }
    spec = sub;
  }
  if (!ArityOk(spec->arity, ctx.argc())) {
    return Refuse(*spec, ctx, "ERR wrong number of arguments for '" + spec->name + "' command");
  }
  if (!ctx.session.authenticated && !(spec->flags & kCmdNoAuth)) {
    return Refuse(*spec, ctx, errors::kNoAuth);
  }
  if (std::string denied; !acl::Allowed(ctx, *spec, &denied)) {
    return denied.empty() ? nullptr : Refuse(*spec, ctx, denied);
  }
  if (ctx.server.loading.load(std::memory_order_relaxed) && !(spec->flags & kCmdLoading)) {
    return Refuse(*spec, ctx, journal::kLoadingError);
  }
  if (ctx.server.maxmemory.load(std::memory_order_relaxed) > 0 && RefusedForMemory(*spec, ctx)) {
    return Refuse(*spec, ctx, errors::kOom);
  }
  if (const int err = ctx.server.journal_write_errno.load(std::memory_order_relaxed);
      err != 0 && RefusedForDiskError(*spec, ctx)) {
    return Refuse(*spec, ctx, DiskErrorReply(err));
  }
  if (ctx.server.raft_follower.load(std::memory_order_acquire)) {
    if (NeedsLeader(*spec, ctx) && !cluster::LeaderKnown(ctx.server)) {
      return Refuse(*spec, ctx, kNoLeader);
    }
    if (const std::string_view refused = RefusedOnFollower(*spec, ctx); !refused.empty()) {
      return Refuse(*spec, ctx, refused);
    }
  }
  if (ctx.session.subscriptions != 0 && ctx.session.proto == 2 &&
      !(spec->flags & kCmdSubscriberContext) && ctx.origin == CommandOrigin::kClient) {
    return Refuse(*spec, ctx, SubscriberContextError(spec->name));
  }
  // A script past lua-time-limit: one relaxed load on the fast path. The script's own
  // redis.call() (and EXEC's commands) are let through.
  if (ctx.server.script_busy.load(std::memory_order_relaxed) && !(spec->flags & kCmdAllowBusy) &&
      ctx.origin == CommandOrigin::kClient) {
    return Refuse(*spec, ctx, errors::kBusyScript);
  }
  if (spec->handler == nullptr) {
    return Refuse(*spec, ctx, "ERR wrong number of arguments for '" + spec->name + "' command");
  }
  // CLIENT PAUSE: one relaxed load when no pause is set (commands/client_pause.h).
  if (ctx.server.client_pause_type.load(std::memory_order_relaxed) != 0 &&
      PostponedByPause(*spec, ctx)) {
    if (ctx.session.in_multi) ctx.session.multi_error = was_error;
    *answer = spec;
    return nullptr;
  }
  ctx.session.info->last_cmd.store(&spec->name, std::memory_order_relaxed);
  if (ctx.session.in_multi) {
    ctx.session.multi_error = was_error;
    if (!(spec->flags & kCmdTxControl)) {
      ctx.session.queued.emplace_back(ctx.args.begin(), ctx.args.end());
      ctx.out.Simple("QUEUED");
      *answer = spec;
      return nullptr;
    }
  }
  if (ctx.server.faults.active() && intercept != nullptr && intercept(*spec, ctx)) {
    *answer = spec;
    return nullptr;
  }
  return spec;
}
}  // namespace

// The common request (a repeated command, an ordinary client and server) skips the lookup
// and the checks: commands/dispatch_fast_path.h says when that gives the same answer.
const CommandSpec* CommandTable::Dispatch(CommandContext& ctx) const {
  const std::int64_t batch_mark = CommandBatch::Take();  // metrics/command_stats.h
  const CommandSpec* spec = dispatch::Recall(specs(), ctx.args[0]);
  if (spec == nullptr) [[unlikely]] {
    spec = Find(ctx.args[0]);
    if (spec != nullptr) dispatch::Remember(specs(), spec);
  }
  const bool ordinary = spec != nullptr && dispatch::Ordinary(*spec, ctx);
  if (ordinary) [[likely]] {
    ctx.session.info->last_cmd.store(&spec->name, std::memory_order_relaxed);
  } else {
    const CommandSpec* answer;
    spec = CheckUnusual(spec, ctx, interceptor_, &answer);
    if (spec == nullptr) return answer;
  }
  const CommandTimer timer(batch_mark, ctx.origin == CommandOrigin::kClient);
  const std::size_t reply_start = ctx.out.buffer() != nullptr ? ctx.out.buffer()->size() : 0;
  RunHandler(*spec, ctx);
  // A cluster node (never ordinary): what the command read or refused to overwrite is
  // answered only once committed, and under a lease or a barrier (journal/reply_log.h).
  if (!ordinary && ctx.server.reply_log != nullptr && (spec->flags & (kCmdReadonly | kCmdWrite))) {
    ctx.server.reply_log->FenceRead();
  }
  if (!ctx.record_later) RecordCall(*spec, ctx, timer, reply_start);  // stats, slowlog
  // As Redis's total_commands_processed: every command that ran, whoever issued it (EXEC's
  // queue and scripts' redis.call too), counted after it ran so that INFO leaves itself out;
  // refused and queued commands are not counted.
  ctx.server.stats.total_commands.fetch_add(1, std::memory_order_relaxed);
  return spec;
}

}  // namespace latch
