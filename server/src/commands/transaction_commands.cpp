// MULTI, EXEC, DISCARD, WATCH, UNWATCH with Redis 7.0 semantics. Queuing itself happens in
// CommandTable::Dispatch (every command but MULTI, EXEC, DISCARD and WATCH is queued while in
// MULTI); EXEC runs the queue holding every shard, so the transaction is atomic whatever the
// threads. A queue with a Lua script runs on the script thread (ExecOnScriptThread).
#include "commands/transaction_commands.h"

#include <string>
#include <vector>

#include "commands/arg_parse.h"
#include "commands/command_table.h"
#include "commands/errors.h"
#include "commands/key_lock.h"

namespace latch {

void ClearWatches(Session& s, WatchRegistry& registry) {
  if (s.watcher && !s.watched_keys.empty()) {
    registry.Unwatch(s.watched_dbs, s.watched_keys, s.watcher.get());
  }
  s.watched_keys.clear();
  s.watched_dbs.clear();
  s.watched_existed.clear();
  if (s.watcher) s.watcher->dirty = false;
}

void ResetMulti(Session& s) {
  s.in_multi = false;
  s.multi_error = false;
  s.queued.clear();
}

void AbortExec(CommandContext& ctx, std::string_view error) {
  ResetMulti(ctx.session);
  ClearWatches(ctx.session, ctx.server.watches);
  std::string msg = "EXECABORT Transaction discarded because of: ";
  msg.append(error);
  ctx.out.Error(msg);
}

void RunTransaction(CommandContext& ctx) {
  Session& s = ctx.session;
  ShardSet all;
  // A script went busy while we waited: as an EXEC arriving during the script on Redis,
  // refused before it runs.
  if (!all.LockEveryDb(ctx.server.dbs, GiveUpFlag(ctx))) {
    return AbortExec(ctx, errors::kBusyScript);
  }
  bool dirty = s.watcher && s.watcher->dirty.load();
  // A watched key that was live at WATCH and has expired since counts as modified.
  for (std::size_t i = 0; !dirty && i < s.watched_keys.size(); ++i) {
    if (!s.watched_existed[i]) continue;
    KeyRef k = Resolve(ctx.server.dbs.at(s.watched_dbs[i]), s.watched_keys[i]);
    dirty = k.shard->Peek(k.key, k.hash, ctx.now.mono_ms) == nullptr;
  }
  auto queued = std::move(s.queued);
  ResetMulti(s);
  ClearWatches(s, ctx.server.watches);
  if (dirty) return ctx.out.NullArray();
  ctx.out.ArrayHeader(queued.size());
  std::vector<std::string_view> argv;
  for (const auto& cmd : queued) {
    argv.assign(cmd.begin(), cmd.end());
    CommandContext sub{argv, ctx.out, s, ctx.server, ctx.now, nullptr, CommandOrigin::kExec};
    ctx.server.commands->Dispatch(sub);
    if (s.close_after_reply) break;
  }
}

bool RunsLuaScript(std::string_view command) {
  for (std::string_view name : {"eval", "evalsha", "eval_ro", "evalsha_ro"}) {
    if (EqualsNoCase(command, name)) return true;
  }
  return false;
}

namespace {

void MultiCommand(CommandContext& ctx) {
  if (ctx.session.in_multi) return ctx.out.Error("ERR MULTI calls can not be nested");
  ctx.session.in_multi = true;
  ctx.session.multi_error = false;
  ctx.session.queued.clear();
  ctx.out.Ok();
}

void DiscardCommand(CommandContext& ctx) {
  if (!ctx.session.in_multi) return ctx.out.Error("ERR DISCARD without MULTI");
  ResetMulti(ctx.session);
  ClearWatches(ctx.session, ctx.server.watches);
  ctx.out.Ok();
}

void WatchCommand(CommandContext& ctx) {
  if (ctx.session.in_multi) return ctx.out.Error("ERR WATCH inside MULTI is not allowed");
  Session& s = ctx.session;
  if (!s.watcher) s.watcher = std::make_unique<WatchRegistry::Watcher>();
  for (std::size_t i = 1; i < ctx.argc(); ++i) {
    std::string key(ctx.arg(i));
    bool already = false;
    for (std::size_t j = 0; j < s.watched_keys.size(); ++j) {
      already = already || (s.watched_keys[j] == key && s.watched_dbs[j] == s.db);
    }
    if (already) continue;
    // Read, then registered, both under the shard lock: a write that takes the lock after
    // us sees the registration (writers touch watchers from their key event, under that
    // lock), and one before us is what we read. Reading first lets a key that had already
    // expired be removed without touching this watcher: as in Redis, watching a stale key
    // and then seeing it gone is no change.
    const KeyRef k = Resolve(ctx.db(), key);
    bool exists = false;
    ShardSet lock;
    if (lock.Lock(ctx.db(), k, GiveUpFlag(ctx))) {
      exists = k.shard->Peek(k.key, k.hash, ctx.now.mono_ms) != nullptr;
      ctx.server.watches.Watch(s.db, key, s.watcher.get());
    } else {
      // A busy script holds the key and may write it: the transaction cannot be trusted.
      ctx.server.watches.Watch(s.db, key, s.watcher.get());
      s.watcher->dirty = true;
    }
    s.watched_keys.push_back(std::move(key));
    s.watched_dbs.push_back(s.db);
    s.watched_existed.push_back(exists);
  }
  ctx.out.Ok();
}

void UnwatchCommand(CommandContext& ctx) {
  ClearWatches(ctx.session, ctx.server.watches);
  ctx.out.Ok();
}

// A Lua script in the queue: the transaction runs on the script thread (ExecOnScriptThread)
// when the client can park, so that its worker answers everyone meanwhile (BUSY, SCRIPT KILL).
bool QueueRunsLua(const Session& s) {
  for (const auto& cmd : s.queued) {
    if (!cmd.empty() && RunsLuaScript(cmd[0])) return true;
  }
  return false;
}

void ExecCommand(CommandContext& ctx) {
  Session& s = ctx.session;
  if (!s.in_multi) return ctx.out.Error("ERR EXEC without MULTI");
  // As Redis: over maxmemory, a transaction holding a command that can grow memory is
  // discarded whole (checked before the queue's own errors).
  if (ctx.server.OverMaxmemory() && !ctx.server.script_busy.load(std::memory_order_relaxed)) {
    const CommandTable& table = *ctx.server.commands;
    for (const auto& cmd : s.queued) {
      const CommandSpec* spec = table.FindCommand(cmd);
      if (spec != nullptr && (spec->flags & kCmdDenyOom)) return AbortExec(ctx, errors::kOom);
    }
  }
  if (s.multi_error) {
    ResetMulti(s);
    ClearWatches(s, ctx.server.watches);
    return ctx.out.Error("EXECABORT Transaction discarded because of previous errors.");
  }
  if (ctx.origin == CommandOrigin::kClient && ctx.host != nullptr && QueueRunsLua(s)) {
    return ExecOnScriptThread(ctx);
  }
  RunTransaction(ctx);
}

}  // namespace

void RegisterTransactionCommands(CommandTable& t) {
  const auto f = kCmdNoScript | kCmdLoading | kCmdStale | kCmdFast | kCmdTxControl;
  t.Add({.name = "multi", .arity = 1, .flags = f | kCmdAllowBusy, .handler = MultiCommand,
         .group = "transactions", .summary = "Starts a transaction.", .since = "1.2.0"});
  t.Add({.name = "exec", .arity = 1, .flags = kCmdNoScript | kCmdLoading | kCmdStale |
                                              kCmdTxControl,
         .handler = ExecCommand, .group = "transactions",
         .summary = "Executes all commands in a transaction.", .since = "1.2.0"});
  t.Add({.name = "discard", .arity = 1, .flags = f | kCmdAllowBusy, .handler = DiscardCommand,
         .group = "transactions", .summary = "Discards a transaction.", .since = "2.0.0"});
  t.Add({.name = "watch", .arity = -2, .flags = f | kCmdAllowBusy | kCmdOwnKeyLocks,
         .first_key = 1,
         .last_key = -1, .key_step = 1, .handler = WatchCommand, .group = "transactions",
         .summary = "Monitors changes to keys to determine the execution of a transaction.",
         .since = "2.2.0"});
  // Queued inside MULTI, as in Redis: at EXEC it is a no-op, the WATCHes already checked.
  t.Add({.name = "unwatch", .arity = 1, .flags = (f & ~kCmdTxControl) | kCmdAllowBusy,
         .handler = UnwatchCommand, .group = "transactions",
         .summary = "Forgets about watched keys of a transaction.", .since = "2.2.0"});
}

}  // namespace latch
