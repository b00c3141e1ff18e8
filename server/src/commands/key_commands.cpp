// DEL, UNLINK, EXISTS, TYPE, KEYS, SCAN, DBSIZE, FLUSHDB, FLUSHALL.
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

#include <tsl/robin_set.h>

namespace latch {
namespace {

// A key named twice is deleted once, as in Redis. Only a lock hand-off can bring a deleted
// key back within one DEL (the key event grants it to a queued waiter), and the second
// mention must not delete the new holder's key. So the names already seen are kept, in a
// hash set keyed by the dispatcher's hash (linear), only when a shard of the command has
// waiters; otherwise a repeated name simply finds nothing. The shards are held throughout,
// so no waiter can join while the DEL runs.
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

bool AnyWaiters(CommandContext& ctx) {
  for (const KeyRef& k : ctx.keys) {
    if (ctx.server.locks.ForShard(k.shard->index()).tracked() > 0) return true;
  }
  return false;
}

void DelCommand(CommandContext& ctx) {
  const store::OpEnv env = ctx.env();
  std::int64_t deleted = 0;
  if (ctx.keys.size() > 1 && AnyWaiters(ctx)) {
    SeenKeys seen;
    store::ForEachKeyPrefetched(ctx.keys, [&](const KeyRef& k) {
      if (seen.First(k) && store::OpDel(k, env)) ++deleted;
    });
  } else {
    store::ForEachKeyPrefetched(ctx.keys, [&](const KeyRef& k) {
      if (store::OpDel(k, env)) ++deleted;
    });
  }
  ctx.out.Integer(deleted);
}

void ExistsCommand(CommandContext& ctx) {
  std::int64_t found = 0;
  store::ForEachKeyPrefetched(ctx.keys, [&](const KeyRef& k) {
    if (k.shard->Find(k.key, k.hash, ctx.now.mono_ms) != nullptr) ++found;
  });
  ctx.out.Integer(found);
}

void TypeCommand(CommandContext& ctx) {
  const KeyRef& k = ctx.key(0);
  const store::Object* o = k.shard->Find(k.key, k.hash, ctx.now.mono_ms);
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

// SCAN walks keys in ascending order of their 64-bit hash (shards are ranges of it), so the
// cursor is simply the next hash to visit: every key that exists for the whole scan is
// returned once, even when tables are resized between calls (stronger than Redis's
// "at least once").
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
  std::vector<std::pair<std::uint64_t, std::string>> batch;  // (hash, key) of visited keys
  std::uint64_t next = cursor;
  bool done = false;
  const std::size_t want = static_cast<std::size_t>(count);
  for (int i = ks.ShardIndex(cursor); i < ks.shard_count() && batch.size() < want; ++i) {
    store::Shard& s = ks.shard(i);
    std::vector<std::pair<std::uint64_t, std::string>> candidates;
    {
      ShardSet lock;
      if (!lock.Lock(ks, KeyRef{{}, 0, &s}, GiveUpFlag(ctx))) {
        return ctx.out.Error(errors::kBusyScript);
      }
      s.ForEach([&](const store::Object* o) {
        std::uint64_t h = store::HashKey(o->key());
        if (h >= cursor) candidates.emplace_back(h, std::string(o->key()));
      });
    }
    std::sort(candidates.begin(), candidates.end());
    for (auto& c : candidates) {
      // Never split keys of equal hash across two calls.
      if (batch.size() >= want && c.first != batch.back().first) break;
      batch.push_back(std::move(c));
    }
    if (i == ks.shard_count() - 1 && batch.size() <= want) done = true;
  }
  if (batch.size() < want) done = true;
  if (!done && !batch.empty()) {
    next = batch.back().first + 1;
    if (next == 0) done = true;  // wrapped past the largest hash
  }
  if (done) next = 0;
  if (!done && batch.empty()) next = 0;
  std::vector<std::string_view> keys;
  for (auto& [h, key] : batch) {
    if (has_pattern && !GlobMatch(pattern, key, false)) continue;
    // Expired keys are filtered: check under the key's shard lock.
    const KeyRef k{key, h, &ks.ShardFor(h)};
    ShardSet lock;
    if (!lock.Lock(ks, k, GiveUpFlag(ctx))) return ctx.out.Error(errors::kBusyScript);
    const store::Object* o = k.shard->Find(k.key, k.hash, ctx.now.mono_ms);
    if (o == nullptr) continue;
    if (has_type && !EqualsNoCase(type, store::TypeName(o->type()))) continue;
    keys.push_back(key);
  }
  ctx.out.ArrayHeader(2);
  ctx.out.Bulk(std::to_string(next));
  ctx.out.ArrayHeader(keys.size());
  for (auto k : keys) ctx.out.Bulk(k);
}

}  // namespace

void RegisterKeyCommands(CommandTable& t) {
  t.Add({.name = "del", .arity = -2, .flags = kCmdWrite, .first_key = 1, .last_key = -1,
         .key_step = 1, .handler = DelCommand, .group = "generic",
         .summary = "Deletes one or more keys.", .since = "1.0.0"});
  t.Add({.name = "unlink", .arity = -2, .flags = kCmdWrite | kCmdFast, .first_key = 1,
         .last_key = -1, .key_step = 1, .handler = DelCommand, .group = "generic",
         .summary = "Asynchronously deletes one or more keys.", .since = "4.0.0"});
  t.Add({.name = "exists", .arity = -2, .flags = kCmdReadonly | kCmdFast, .first_key = 1,
         .last_key = -1, .key_step = 1, .handler = ExistsCommand, .group = "generic",
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
