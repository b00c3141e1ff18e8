// RENAME, RENAMENX, COPY (also into another database), TOUCH, RANDOMKEY: Redis 7.0's generic key
// commands beyond DEL/EXISTS/TYPE. Moves and copies are store/key_move_ops.h, whose key
// events say what a lock waiter on either key sees.
#include <random>
#include <string>

#include "commands/arg_parse.h"
#include "commands/command_table.h"
#include "commands/errors.h"
#include "commands/key_lock.h"
#include "latch/protocol/int_parse.h"
#include "store/key_move_ops.h"
#include "store/keyspace.h"

namespace latch {
namespace {

using store::OpStatus;

void RenameCommand(CommandContext& ctx) {
  switch (store::OpRename(ctx.key(0), ctx.key(1), false, ctx.env())) {
    case OpStatus::kNoKey: return ctx.out.Error(errors::kNoSuchKey);
    default: return ctx.out.Ok();
  }
}

void RenameNxCommand(CommandContext& ctx) {
  switch (store::OpRename(ctx.key(0), ctx.key(1), true, ctx.env())) {
    case OpStatus::kNoKey: return ctx.out.Error(errors::kNoSuchKey);
    case OpStatus::kOk: return ctx.out.Integer(1);
    default: return ctx.out.Integer(0);
  }
}

// COPY source destination [DB destination-db] [REPLACE]. The keys' shards are locked here
// (kCmdOwnKeyLocks): the destination may be in another database, in global index order.
void CopyCommand(CommandContext& ctx) {
  bool replace = false;
  int db = ctx.session.db;
  for (std::size_t j = 3; j < ctx.argc(); ++j) {
    if (EqualsNoCase(ctx.arg(j), "replace")) {
      replace = true;
    } else if (EqualsNoCase(ctx.arg(j), "db") && j + 1 < ctx.argc()) {
      // Redis reads a long long here (so 2^40 is "out of range", not "not an integer").
      std::int64_t v = 0;
      if (!ParseInt64(ctx.arg(++j), &v)) return ctx.out.Error(errors::kNotInteger);
      if (v < 0 || v >= ctx.server.dbs.count()) return ctx.out.Error(errors::kDbIndexOutOfRange);
      db = static_cast<int>(v);
    } else {
      return ctx.out.Error(errors::kSyntax);
    }
  }
  if (db == ctx.session.db && ctx.arg(1) == ctx.arg(2)) {
    return ctx.out.Error("ERR source and destination objects are the same");
  }
  store::Keyspace& src = ctx.db();
  store::Keyspace& dst = db == ctx.session.db ? src : ctx.server.Database(db);
  const KeyRef refs[2] = {Resolve(src, ctx.arg(1)), Resolve(dst, ctx.arg(2))};
  ShardSet held;
  if (!held.Lock(src, refs, GiveUpFlag(ctx))) return ctx.out.Error(errors::kBusyScript);
  ctx.out.Integer(store::OpCopy(refs[0], refs[1], replace, ctx.env()) == OpStatus::kOk);
}

void TouchCommand(CommandContext& ctx) {
  std::int64_t found = 0;
  for (const KeyRef& k : ctx.keys) {
    if (k.shard->Find(k.key, k.hash, ctx.now.mono_ms) != nullptr) ++found;
  }
  ctx.out.Integer(found);
}

// A key chosen at random: a shard weighted by its key count, then a position in it. O(keys
// of one shard); lock services rarely call it. Expired keys found on the way are skipped.
void RandomKeyCommand(CommandContext& ctx) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  store::Keyspace& ks = ctx.db();
  for (int attempt = 0; attempt < 16; ++attempt) {
    const std::size_t total = ks.TotalKeys();
    if (total == 0) break;
    std::size_t pick = std::uniform_int_distribution<std::size_t>(0, total - 1)(rng);
    int i = 0;
    for (; i + 1 < ks.shard_count() && pick >= ks.shard(i).size(); ++i) pick -= ks.shard(i).size();
    store::Shard& s = ks.shard(i);
    ShardSet lock;
    if (!lock.Lock(ks, KeyRef{{}, 0, &s}, GiveUpFlag(ctx))) {
      return ctx.out.Error(errors::kBusyScript);
    }
    std::string key;
    bool found = false;
    std::size_t seen = 0;
    s.ForEach([&](const store::Object* o) {
      if (found || o->expired(ctx.now.mono_ms)) return;
      if (seen++ >= pick) {
        key.assign(o->key());
        found = true;
      }
    });
    if (found) return ctx.out.Bulk(key);
  }
  ctx.out.Null();
}

}  // namespace

void RegisterKeyMoveCommands(CommandTable& t) {
  t.Add({.name = "rename", .arity = 3, .flags = kCmdWrite, .first_key = 1, .last_key = 2,
         .key_step = 1, .handler = RenameCommand, .group = "generic",
         .summary = "Renames a key and overwrites the destination.", .since = "1.0.0"});
  t.Add({.name = "renamenx", .arity = 3, .flags = kCmdWrite | kCmdFast, .first_key = 1,
         .last_key = 2, .key_step = 1, .handler = RenameNxCommand, .group = "generic",
         .summary = "Renames a key only when the target key name doesn't exist.",
         .since = "1.0.0"});
  t.Add({.name = "copy", .arity = -3, .flags = kCmdWrite | kCmdDenyOom | kCmdOwnKeyLocks,
         .first_key = 1,
         .last_key = 2, .key_step = 1, .handler = CopyCommand, .group = "generic",
         .summary = "Copies the value of a key to a new key.", .since = "6.2.0"});
  t.Add({.name = "touch", .arity = -2, .flags = kCmdReadonly | kCmdFast, .first_key = 1,
         .last_key = -1, .key_step = 1, .handler = TouchCommand, .group = "generic",
         .summary = "Returns the number of existing keys out of those specified after updating "
                    "the time they were last accessed.",
         .since = "3.2.1"});
  t.Add({.name = "randomkey", .arity = 1, .flags = kCmdReadonly, .handler = RandomKeyCommand,
         .group = "generic", .summary = "Returns a random key name from the database.",
         .since = "1.0.0"});
}

}  // namespace latch
