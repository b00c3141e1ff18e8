#pragma once
// Shard locking for commands.
//
// - The dispatcher resolves a command's keys once (hash, shard) from the table's key
//   positions and holds their shards while the handler runs (ctx.keys); handlers then call
//   Ops directly. Keyless commands that touch the keyspace (KEYS, SCAN, FLUSHALL, EXEC,
//   scripts) lock through ShardSet themselves.
// - Shards are locked in ascending index order, each once; shards this thread already holds
//   (EXEC and scripts hold them all) are skipped, so a command runs unchanged inside them.
// - A client's command never waits for a shard without being able to answer: the wait is in
//   slices, and once a script is past busy-reply-threshold (ServerState::script_busy) it
//   gives up and the client is answered BUSY (GiveUpFlag). Only commands run by EXEC or a
//   script (which already hold every shard) and threads serving no client wait plainly.
#include <atomic>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "commands/context.h"
#include "store/key_ref.h"
#include "store/keyspace.h"
#include "store/keyspace_set.h"
#include "store/shard_guard.h"

namespace latch {

using store::KeyRef;
using store::ShardGuard;

inline KeyRef Resolve(store::Keyspace& ks, std::string_view key) {
  const std::uint64_t h = store::HashKey(key);
  return KeyRef{key, h, &ks.ShardFor(h)};
}

// The flag a command's shard waits give up on: the busy script flag for a client's own
// command; nothing inside EXEC or a script (their thread holds every shard already).
inline const std::atomic<bool>* GiveUpFlag(const CommandContext& ctx) {
  return ctx.origin == CommandOrigin::kClient ? &ctx.server.script_busy : nullptr;
}

// Holds a set of shards, released in reverse order by the destructor (or Unlock).
class ShardSet {
 public:
  ShardSet() = default;
  ~ShardSet() { Unlock(); }
  ShardSet(const ShardSet&) = delete;
  ShardSet& operator=(const ShardSet&) = delete;

  // Locks the shards of `keys` not held by this thread yet, ascending, each once. Linear in
  // the number of keys. False when it gave up (see store::LockShard): nothing is held.
  bool Lock(store::Keyspace& ks, std::span<const KeyRef> keys, const std::atomic<bool>* give_up);
  bool Lock(store::Keyspace& ks, const KeyRef& key, const std::atomic<bool>* give_up) {
    return Lock(ks, std::span<const KeyRef>(&key, 1), give_up);
  }
  // Every shard: the keyspace is frozen (FLUSHDB, KEYS).
  bool LockAll(store::Keyspace& ks, const std::atomic<bool>* give_up);
  // Every shard of every database created so far, in creation (= lock) order: the whole
  // server is frozen (EXEC, scripts, FLUSHALL). With only DB 0 ever used, exactly LockAll of
  // DB 0. A database created later sorts after all of these, so whoever holds this set may
  // still lock its shards (keyspace_set.h).
  bool LockEveryDb(store::KeyspaceSet& dbs, const std::atomic<bool>* give_up);
  void Unlock();

 private:
  bool Take(store::Shard& s, const std::atomic<bool>* give_up);
  // Held shards in locking order: the first few inline (a single-key command allocates
  // nothing), the rest in more_.
  static constexpr std::size_t kInline = 4;
  store::Shard* inline_[kInline];
  std::vector<store::Shard*> more_;
  std::size_t count_ = 0;
};

// A command's keys, resolved once: the argument views with their hash and shard.
class KeyRefs {
 public:
  void Resolve(store::Keyspace& ks, std::span<const std::string_view> keys);
  std::span<const KeyRef> refs() const { return {data_, size_}; }

 private:
  static constexpr std::size_t kInline = 4;  // most commands name one key
  KeyRef inline_[kInline];
  std::vector<KeyRef> many_;
  KeyRef* data_ = inline_;
  std::size_t size_ = 0;
};

}  // namespace latch
