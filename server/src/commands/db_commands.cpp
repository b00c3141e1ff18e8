// WAIT, and the commands that pick, swap, move between or flush databases (SELECT, SWAPDB,
// MOVE, FLUSHDB, FLUSHALL). The databases themselves are store/keyspace_set.h.
#include "commands/db_commands.h"

#include <climits>
#include <string>

#include "commands/arg_parse.h"
#include "commands/command_table.h"
#include "commands/errors.h"
#include "commands/key_lock.h"
#include "journal/persistence.h"
#include "journal/reply_log.h"
#include "latch/protocol/int_parse.h"
#include "store/key_move_ops.h"

namespace latch {

std::string_view ParseDbIndex(std::string_view arg, int* db) {
  std::int64_t v = 0;
  if (!ParseInt64(arg, &v)) return errors::kNotInteger;
  if (v < INT_MIN || v > INT_MAX) {
    return "ERR value is out of range, value must between -2147483648 and 2147483647";
  }
  *db = static_cast<int>(v);
  return {};
}

bool DbInRange(const ServerState& server, int db) { return db >= 0 && db < server.dbs.count(); }

namespace {

// WAIT numreplicas timeout: latchd has no replicas, so no write is ever acknowledged by
// one. As Redis with none connected: asking for 0 answers 0 at once; asking for more parks
// the client until the timeout (0: for ever) and then answers 0. Inside MULTI (no
// BlockHost) it answers at once, as Redis does for a client that may not block.
void WaitCommand(CommandContext& ctx) {
  std::int64_t timeout = 0;
  if (!ParseInt64(ctx.arg(2), &timeout)) {
    return ctx.out.Error("ERR timeout is not an integer or out of range");
  }
  if (timeout < 0) return ctx.out.Error("ERR timeout is negative");
  std::int64_t replicas = 0;
  if (!ParseInt64(ctx.arg(1), &replicas)) return ctx.out.Error(errors::kNotInteger);
  if (replicas <= 0 || ctx.host == nullptr) return ctx.out.Integer(0);
  std::shared_ptr<BlockedClient> blocked = ctx.host->Block(timeout);
  blocked->on_timeout = [](protocol::ReplyWriter& w) { w.Integer(0); };
}

// SELECT index: the database is created on first use. Inside a script it changes only the
// script's database (the script runs with its own Session).
void SelectCommand(CommandContext& ctx) {
  int db = 0;
  if (auto e = ParseDbIndex(ctx.arg(1), &db); !e.empty()) return ctx.out.Error(e);
  if (!DbInRange(ctx.server, db)) return ctx.out.Error(errors::kDbIndexOutOfRange);
  ctx.server.Database(db);
  ctx.session.db = db;
  if (ctx.session.info) ctx.session.info->db.store(db, std::memory_order_relaxed);
  ctx.out.Ok();
}

// Holds every shard of two databases, in lock (global index) order.
bool LockBoth(ShardSet& held, store::Keyspace& a, store::Keyspace& b,
              const std::atomic<bool>* give_up) {
  store::Keyspace& first = a.base() < b.base() ? a : b;
  store::Keyspace& second = a.base() < b.base() ? b : a;
  return held.LockAll(first, give_up) && held.LockAll(second, give_up);
}

// SWAPDB a b: O(1), the two slots exchanged while every shard of both is held. As Redis,
// WATCH on a key of either database that exists in either one is dirtied, and a client in
// database a sees b's keys from its next command on.
void SwapDbCommand(CommandContext& ctx) {
  int a = 0, b = 0;
  if (!ParseDbIndex(ctx.arg(1), &a).empty()) return ctx.out.Error("ERR invalid first DB index");
  if (!ParseDbIndex(ctx.arg(2), &b).empty()) return ctx.out.Error("ERR invalid second DB index");
  if (!DbInRange(ctx.server, a) || !DbInRange(ctx.server, b)) {
    return ctx.out.Error(errors::kDbIndexOutOfRange);
  }
  if (a == b) return ctx.out.Ok();
  store::Keyspace& ka = ctx.server.Database(a);
  store::Keyspace& kb = ctx.server.Database(b);
  ShardSet held;
  if (!LockBoth(held, ka, kb, GiveUpFlag(ctx))) return ctx.out.Error(errors::kBusyScript);
  if (ctx.server.watches.active()) {
    auto exists = [&](std::string_view key) {
      const std::uint64_t h = store::HashKey(key);
      return ka.ShardFor(h).Peek(key, h, 0) != nullptr || kb.ShardFor(h).Peek(key, h, 0) != nullptr;
    };
    ctx.server.watches.TouchIf(a, exists);
    ctx.server.watches.TouchIf(b, exists);
  }
  ctx.server.dbs.Swap(a, b);
  ctx.server.persistence->DatabasesSwapped(a, b);
  if (ctx.server.reply_log != nullptr) ctx.server.reply_log->DatabasesSwapped(a, b);
  ctx.out.Ok();
}

// MOVE key db: the key with its TTL (and a lock's fencing token) into database db, unless
// it exists there. Both shards are locked here, in global index order (kCmdOwnKeyLocks).
void MoveCommand(CommandContext& ctx) {
  int db = 0;
  if (auto e = ParseDbIndex(ctx.arg(2), &db); !e.empty()) return ctx.out.Error(e);
  if (!DbInRange(ctx.server, db)) return ctx.out.Error(errors::kDbIndexOutOfRange);
  if (db == ctx.session.db) {
    return ctx.out.Error("ERR source and destination objects are the same");
  }
  store::Keyspace& src = ctx.db();
  store::Keyspace& dst = ctx.server.Database(db);
  const KeyRef refs[2] = {Resolve(src, ctx.arg(1)), Resolve(dst, ctx.arg(1))};
  ShardSet held;
  if (!held.Lock(src, refs, GiveUpFlag(ctx))) return ctx.out.Error(errors::kBusyScript);
  ctx.out.Integer(store::OpRename(refs[0], refs[1], true, ctx.env()) == store::OpStatus::kOk);
}

// FLUSHDB / FLUSHALL [ASYNC|SYNC]: both flush at once (ASYNC frees nothing later).
bool FlushArgsOk(CommandContext& ctx) {
  if (ctx.argc() > 2 || (ctx.argc() == 2 && !EqualsNoCase(ctx.arg(1), "sync") &&
                         !EqualsNoCase(ctx.arg(1), "async"))) {
    ctx.out.Error(errors::kSyntax);
    return false;
  }
  return true;
}

void ClearAll(store::Keyspace& ks) {
  for (int i = 0; i < ks.shard_count(); ++i) ks.shard(i).Clear();
}

void FlushDbCommand(CommandContext& ctx) {
  if (!FlushArgsOk(ctx)) return;
  store::Keyspace& ks = ctx.db();
  // Every shard at once: no client sees half a flush.
  ShardSet all;
  if (!all.LockAll(ks, GiveUpFlag(ctx))) return ctx.out.Error(errors::kBusyScript);
  ClearAll(ks);
  ctx.out.Ok();
}

void FlushAllCommand(CommandContext& ctx) {
  if (!FlushArgsOk(ctx)) return;
  ShardSet all;
  if (!all.LockEveryDb(ctx.server.dbs, GiveUpFlag(ctx))) {
    return ctx.out.Error(errors::kBusyScript);
  }
  ctx.server.dbs.ForEachDb([](int, store::Keyspace& ks) { ClearAll(ks); });
  ctx.out.Ok();
}

void DbSizeCommand(CommandContext& ctx) {
  ctx.out.Integer(static_cast<std::int64_t>(ctx.db().TotalKeys()));
}

}  // namespace

void RegisterDbCommands(CommandTable& t) {
  t.Add({.name = "wait", .arity = 3, .flags = kCmdNoScript, .handler = WaitCommand,
         .group = "generic",
         .summary = "Blocks until the asynchronous replication of all preceding write commands "
                    "sent by the connection is completed.",
         .since = "3.0.0"});
  t.Add({.name = "select", .arity = 2, .flags = kCmdFast | kCmdLoading | kCmdStale,
         .handler = SelectCommand, .group = "connection",
         .summary = "Changes the selected database.", .since = "1.0.0"});
  t.Add({.name = "swapdb", .arity = 3, .flags = kCmdWrite | kCmdFast, .handler = SwapDbCommand,
         .group = "server", .summary = "Swaps two Redis databases.", .since = "4.0.0"});
  t.Add({.name = "move", .arity = 3, .flags = kCmdWrite | kCmdFast | kCmdOwnKeyLocks,
         .first_key = 1, .last_key = 1, .key_step = 1, .handler = MoveCommand,
         .group = "generic", .summary = "Moves a key to another database.", .since = "1.0.0"});
  t.Add({.name = "dbsize", .arity = 1, .flags = kCmdReadonly | kCmdFast,
         .handler = DbSizeCommand, .group = "server",
         .summary = "Returns the number of keys in the database.", .since = "1.0.0"});
  t.Add({.name = "flushdb", .arity = -1, .flags = kCmdWrite, .handler = FlushDbCommand,
         .group = "server", .summary = "Remove all keys from the current database.",
         .since = "1.0.0"});
  t.Add({.name = "flushall", .arity = -1, .flags = kCmdWrite, .handler = FlushAllCommand,
         .group = "server", .summary = "Removes all keys from all databases.",
         .since = "1.0.0"});
}

}  // namespace latch
