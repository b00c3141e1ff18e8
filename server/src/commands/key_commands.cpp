// DEL, UNLINK, EXISTS, TYPE, KEYS, SCAN, DBSIZE, FLUSHDB, FLUSHALL.
#include <tsl/robin_set.h>

#include <algorithm>
#include <charconv>
#include <limits>
#include <string>
#include <vector>

#include "commands/arg_parse.h"
#include "commands/command_table.h"
#include "commands/errors.h"
#include "commands/key_lock.h"
#include "glob_match.h"
#include "store/key_batch.h"
#include "store/key_ops.h"
#include "store/keyspace_scan.h"

namespace latch {
namespace {

// A key named twice is deleted once, as in Redis. Only a lock hand-off can bring a deleted
// key back within one DEL (the key event grants it to a queued waiter), and the second
// mention must not delete the new holder's key. So the names already seen are kept, in a
// hash set keyed by the dispatcher's hash (linear), only when the shard has waiters;
// otherwise a repeated name simply finds nothing. The shard is held throughout its keys'
// run (both mentions of a name are in that run), so no waiter can join meanwhile.
class SeenKeys {
 public:
  // True the first time `k` is offered.
  bool First(const KeyRef& k) { return seen_.insert(Name{k.key, k.hash}).second; }

 private:
  struct Name {
    std::string_view key;
    std::uint64_t hash;
    bool operator==(const Name& o) const { return hash == o.hash && key == o.key; }
  };
  struct NameHash {
    std::size_t operator()(const Name& n) const { return static_cast<std::size_t>(n.hash); }
  };
  tsl::robin_set<Name, NameHash, std::equal_to<Name>, std::allocator<Name>, true> seen_;
};

// Whether a shard of `keys` has lock waiters.
bool AnyWaiters(CommandContext& ctx, std::span<const KeyRef> keys) {
  for (const KeyRef& k : keys) {
    if (ctx.server.locks.ForShard(k.shard->index()).tracked() > 0) return true;
  }
  return false;
}

// DEL's work on keys whose shards are held: visit(fn) calls fn(const KeyRef&) for each key
// in turn; each name is deleted once. Returns how many existed. `waiters`: a shard of these
// keys has lock waiters (then second mentions are skipped, see SeenKeys).
struct DeleteRun {
  template <class Visit>
  std::int64_t operator()(CommandContext& ctx, bool waiters, Visit&& visit) const {
    const store::OpEnv env = ctx.env();
    std::int64_t deleted = 0;
    if (waiters) {
      SeenKeys seen;
      visit([&](const KeyRef& k) {
        if (seen.First(k) && store::OpDel(k, env)) ++deleted;
      });
    } else {
      visit([&](const KeyRef& k) {
        if (store::OpDel(k, env)) ++deleted;
      });
    }
    return deleted;
  }
};

// EXISTS's: how many of the keys exist; a name given twice counts twice.
struct ExistsRun {
  template <class Visit>
  std::int64_t operator()(CommandContext& ctx, bool /*waiters*/, Visit&& visit) const {
    std::int64_t found = 0;
    visit([&](const KeyRef& k) {
      if (k.shard->Peek(k.key, k.hash, ctx.now.mono_ms) != nullptr) ++found;
    });
    return found;
  }
};

// Up to this many keys a command locks its shards together and runs its keys in argument
// order (nothing to sort or allocate); beyond, by shard (ShardBatches).
constexpr std::size_t kBatchAbove = 16;

// Shards this command locked and has not released yet; the rest are released on the way
// out (an exception from an Op unwinds through here).
class HeldShards {
 public:
  explicit HeldShards(store::Keyspace& ks) : ks_(ks), held_(ks.shard_count(), 0) {}
  ~HeldShards() {
    for (int i = ks_.shard_count(); i > 0; --i) Release(i - 1);
  }
  HeldShards(const HeldShards&) = delete;
  HeldShards& operator=(const HeldShards&) = delete;

  bool Take(int i, const std::atomic<bool>* give_up) {
    store::Shard& s = ks_.shard(i);
    if (store::ThisThreadHolds(s)) return true;  // EXEC, a script: held by the caller
    if (!store::LockShard(s, give_up)) return false;
    held_[static_cast<std::size_t>(i)] = 1;
    return true;
  }
  void Release(int i) {
    if (!held_[static_cast<std::size_t>(i)]) return;
    held_[static_cast<std::size_t>(i)] = 0;
    store::UnlockShard(ks_.shard(i));
  }

 private:
  store::Keyspace& ks_;
  std::vector<char> held_;
};

// Sums run(ctx, waiters, visit) over the command's keys (arguments 1..), or answers BUSY
// and returns false when a shard wait gave up (nothing ran). Few keys: their shards are
// locked together and the keys run in argument order. Many: grouped by shard without a
// lock, then every shard named is locked (ascending) before any runs, so the command stays
// atomic (no client sees some of its keys done and others not), and each shard is released
// as soon as its own run ends: the other clients of a shard wait for the locking and for
// the runs up to theirs, not for the whole command.
template <class Run>
bool SumByShard(CommandContext& ctx, Run run, std::int64_t* total) {
  store::Keyspace& ks = ctx.db();
  const auto names = ctx.args.subspan(1);
  if (names.size() <= kBatchAbove) {
    KeyRefs refs;
    refs.Resolve(ks, names);
    ShardSet held;
    if (!held.Lock(ks, refs.refs(), GiveUpFlag(ctx))) return false;
    const auto keys = refs.refs();
    *total = run(ctx, keys.size() > 1 && AnyWaiters(ctx, keys), [&](auto&& fn) {
      store::ForEachKeyPrefetched(keys, fn);
    });
    return true;
  }
  const store::ShardBatches batches(ks, names);
  HeldShards held(ks);
  for (int i = 0; i < batches.shard_count(); ++i) {
    if (!batches.empty(i) && !held.Take(i, GiveUpFlag(ctx))) return false;
  }
  *total = 0;
  for (int i = 0; i < batches.shard_count(); ++i) {
    if (batches.empty(i)) continue;
    const bool waiters = ctx.server.locks.ForShard(i).tracked() > 0;
    *total += run(ctx, waiters, [&](auto&& fn) { batches.ForEach(i, fn); });
    held.Release(i);
  }
  return true;
}

void DelCommand(CommandContext& ctx) {
  std::int64_t deleted;
  if (!SumByShard(ctx, DeleteRun{}, &deleted)) return ctx.out.Error(errors::kBusyScript);
  ctx.out.Integer(deleted);
}

void ExistsCommand(CommandContext& ctx) {
  std::int64_t found;
  if (!SumByShard(ctx, ExistsRun{}, &found)) return ctx.out.Error(errors::kBusyScript);
  ctx.out.Integer(found);
}

void TypeCommand(CommandContext& ctx) {
  const KeyRef& k = ctx.key(0);
  const store::Object* o = k.shard->Peek(k.key, k.hash, ctx.now.mono_ms);
  ctx.out.Simple(o != nullptr ? store::TypeName(o->type()) : "none");
}

// Redis skips the match when the pattern is "*".
bool MatchesAll(std::string_view pattern) { return pattern == "*"; }

void KeysCommand(CommandContext& ctx) {
  std::string_view pattern = ctx.arg(1);
  std::vector<std::string> keys;
  store::Keyspace& ks = ctx.db();
  for (int i = 0; i < ks.shard_count(); ++i) {
    store::Shard& s = ks.shard(i);
    ShardSet lock;  // one shard at a time: other clients run in between
    if (!lock.Lock(ks, KeyRef{{}, 0, &s}, GiveUpFlag(ctx))) {
      return ctx.out.Error(errors::kBusyScript);
    }
    s.ForEach([&](const store::Object* o) {
      if (o->expired(ctx.now.mono_ms)) return;
      if (MatchesAll(pattern) || GlobMatch(pattern, o->key(), false)) {
        keys.emplace_back(o->key());
      }
    });
  }
  ctx.out.ArrayHeader(keys.size());
  for (const auto& k : keys) ctx.out.Bulk(k);
}

bool ParseCursor(std::string_view s, std::uint64_t* out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

// SCAN walks the keys in their scan order (store/keyspace_scan.h: a rearrangement of the
// hash that follows how shards lay keys out), so the cursor is simply the next position to
// visit: every key that exists for the whole scan is returned once, even when tables are
// resized between calls (stronger than Redis's "at least once"), and a call costs what it
// returns and skips. As Redis, a call visits at most 10 empty slots per key asked for.
void ScanCommand(CommandContext& ctx) {
  std::uint64_t cursor;
  if (!ParseCursor(ctx.arg(1), &cursor)) {
    ctx.out.Error(errors::kInvalidCursor);
    return;
  }
  std::string_view pattern;
  bool has_pattern = false;
  std::string_view type;
  bool has_type = false;
  std::int64_t count = 10;
  for (std::size_t j = 2; j < ctx.argc(); j += 2) {
    std::string_view opt = ctx.arg(j);
    bool has_value = j + 1 < ctx.argc();
    if (EqualsNoCase(opt, "count") && has_value) {
      if (!ParseInt64(ctx.arg(j + 1), &count)) {
        ctx.out.Error(errors::kNotInteger);
        return;
      }
      if (count < 1) {
        ctx.out.Error(errors::kSyntax);
        return;
      }
    } else if (EqualsNoCase(opt, "match") && has_value) {
      pattern = ctx.arg(j + 1);
      has_pattern = !MatchesAll(pattern);
    } else if (EqualsNoCase(opt, "type") && has_value) {
      type = ctx.arg(j + 1);
      has_type = true;
    } else {
      ctx.out.Error(errors::kSyntax);
      return;
    }
  }
  store::Keyspace& ks = ctx.db();
  // More keys than any keyspace holds, and small enough that 10 times it fits.
  constexpr std::int64_t kMaxWant = std::int64_t{1} << 58;
  const auto want = static_cast<std::size_t>(std::min(count, kMaxWant));
  std::size_t empty_budget = want * 10;
  std::size_t visited = 0;  // keys visited, matching or not: what COUNT counts
  std::vector<store::ScanEntry> batch;
  std::vector<std::string> keys;
  std::uint64_t next = cursor;
  for (int i = ks.ShardIndex(cursor); i < ks.shard_count(); ++i) {
    store::Shard& s = ks.shard(i);
    ShardSet lock;
    if (!lock.Lock(ks, KeyRef{{}, 0, &s}, GiveUpFlag(ctx))) {
      return ctx.out.Error(errors::kBusyScript);
    }
    batch.clear();
    next = store::ScanShard(ks, i, next, want - visited, &empty_budget, &batch);
    // Filtered under the same lock: the lookup expires a key past its deadline, as Redis's
    // SCAN does.
    for (store::ScanEntry& e : batch) {
      if (has_pattern && !GlobMatch(pattern, e.key, false)) continue;
      const store::Object* o = s.Peek(e.key, e.hash, ctx.now.mono_ms);
      if (o == nullptr) continue;
      if (has_type && !EqualsNoCase(type, store::TypeName(o->type()))) continue;
      keys.push_back(std::move(e.key));
    }
    visited += batch.size();
    if (next == 0 || visited >= want || empty_budget == 0 || ks.ShardIndex(next) == i) break;
  }
  ctx.out.ArrayHeader(2);
  ctx.out.Bulk(std::to_string(next));
  ctx.out.ArrayHeader(keys.size());
  for (const auto& k : keys) ctx.out.Bulk(k);
}

}  // namespace

void RegisterKeyCommands(CommandTable& t) {
  // DEL, UNLINK and EXISTS lock their shards themselves (SumByShard): one shard at a time
  // is released as its keys are done.
  t.Add({.name = "del", .arity = -2, .flags = kCmdWrite | kCmdOwnKeyLocks, .first_key = 1,
         .last_key = -1, .key_step = 1, .handler = DelCommand, .group = "generic",
         .summary = "Deletes one or more keys.", .since = "1.0.0"});
  t.Add({.name = "unlink", .arity = -2, .flags = kCmdWrite | kCmdFast | kCmdOwnKeyLocks,
         .first_key = 1, .last_key = -1, .key_step = 1, .handler = DelCommand, .group = "generic",
         .summary = "Asynchronously deletes one or more keys.", .since = "4.0.0"});
  t.Add({.name = "exists", .arity = -2, .flags = kCmdReadonly | kCmdFast | kCmdOwnKeyLocks,
         .first_key = 1, .last_key = -1, .key_step = 1, .handler = ExistsCommand, .group = "generic",
         .summary = "Determines whether one or more keys exist.", .since = "1.0.0"});
  t.Add({.name = "type", .arity = 2, .flags = kCmdReadonly | kCmdFast, .first_key = 1,
         .last_key = 1, .key_step = 1, .handler = TypeCommand, .group = "generic",
         .summary = "Determines the type of value stored at a key.", .since = "1.0.0"});
  t.Add({.name = "keys", .arity = 2, .flags = kCmdReadonly, .handler = KeysCommand,
         .group = "generic", .summary = "Returns all key names that match a pattern.",
         .since = "1.0.0"});
  t.Add({.name = "scan", .arity = -2, .flags = kCmdReadonly, .handler = ScanCommand,
         .group = "generic", .summary = "Iterates over the key names in the database.",
         .since = "2.8.0"});
}

}  // namespace latch
