#pragma once
// Native locks (LOCK.ACQUIRE / RELEASE / EXTEND / INFO) on top of the ordinary keyspace.
//
// A lock IS its string key: value = owner, monotonic deadline = TTL, so GET, PTTL, DEL, SET
// and scripts see the same truth as LOCK.*; the fencing token of a key granted by
// LOCK.ACQUIRE is stored in the key's object (store/object.h). What the keyspace cannot hold,
// the FIFO queue of parked waiters, lives in one LockTable per shard, only for keys that
// someone waits on: a held lock with nobody waiting costs nothing here.
//
// Hand-off: the shard's key events (key_events.h) reach the table through the server's
// router whenever a key of the shard is gone, so every path that removes a key
// (LOCK.RELEASE, DEL/UNLINK/GETDEL/DELEX, lazy and active expiry, FLUSHALL) grants the key to
// the first waiter still waiting, under the same shard lock: nobody can slip in between.
// Overwriting a held key (SET without NX) is not a removal: waiters wait on.
// The waiter is told only after its key exists: claim, create (the key's events, the journal
// record among them), then grant, so a reply never announces a write the journal has not
// got (docs/LOCKS.md).
//
// Deadlines: a waiter's WAIT deadline is on the injected Clock. Whenever a grant and the
// deadline race (the server stalled, the tick came late), the deadline decides: a waiter
// whose deadline has passed is answered nil and skipped, never granted. The worker tick
// times waiters out (TimeOutWaiters), so a ManualClock moves them too.
//
// The acquire/release/extend semantics are Ops (lock_ops.h); this table owns the queues.
//
// Fencing tokens: one server-wide counter (fencing_tokens.h), strictly increasing for every
// grant of every key, also across restarts when the journal or the token floor carries it.
//
// Threading: every LockTable method runs under its shard's lock (ShardGuard), like the
// Shard itself. FencingTokens and LockStats are atomics shared by all shards.
#include <tsl/robin_map.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "latch/clock.h"
#include "store/fencing_tokens.h"
#include "store/key_events.h"
#include "store/keyspace.h"
#include "store/keyspace_set.h"
#include "store/lock_wait_timer.h"

namespace latch::store {

// INFO's "# Locks" counters.
struct LockStats {
  std::atomic<std::uint64_t> grants{0};              // every grant, direct or handed off
  std::atomic<std::uint64_t> contended{0};           // LOCK.ACQUIRE that found the key held
  std::atomic<std::int64_t> waiters{0};              // clients parked right now
  std::atomic<std::uint64_t> handoffs{0};            // grants to a parked waiter
  std::atomic<std::uint64_t> non_owner_releases{0};  // LOCK.RELEASE by another owner
  std::atomic<std::uint64_t> expired_while_held{0};  // LOCK.ACQUIRE leases that ran out
  LockWaitTimer* wait_timer = nullptr;  // times waits for /metrics (lock_wait_timer.h); may be null
};

// A parked LOCK.ACQUIRE ... WAIT.
struct LockWaiter {
  std::string owner;
  std::int64_t ttl_ms = 0;
  std::int64_t deadline_ms = 0;  // monotonic, on the injected Clock; 0 waits forever
  std::int64_t enqueued_ms = 0;  // set by Enqueue: latch_lock_wait_seconds
  // A grant in two steps, both under the shard lock. claim: true when the waiter takes the
  // grant (from then on nothing else answers it), false when it had already stopped waiting.
  // grant: after the key was created for a claimed waiter, so every listener of the key
  // events has seen the write (the journal has appended its record, which the reply must
  // wait for); replies the token, or nil for token 0 (the key could not be created).
  std::function<bool()> claim;
  std::function<void(std::uint64_t token)> grant;
  // Called under the shard lock once the deadline has passed: answers nil unless the
  // waiter has already stopped waiting.
  std::function<void()> time_out;
  std::uint64_t id = 0;  // set by Enqueue
};

// What LOCK.INFO shows.
struct LockInfo {
  std::string owner;
  std::optional<std::uint64_t> token;  // absent for a key not granted by LOCK.ACQUIRE
  std::int64_t ttl_ms = -1;            // -1: no TTL (PTTL's convention)
  std::size_t waiters = 0;
};

class LockTable {
 public:
  LockTable(Shard& shard, const Clock& clock, FencingTokens& tokens, LockStats& stats);
  ~LockTable();
  LockTable(const LockTable&) = delete;
  LockTable& operator=(const LockTable&) = delete;

  Shard& shard() { return shard_; }
  FencingTokens& tokens() { return tokens_; }
  LockStats& stats() { return stats_; }

  // Parks a waiter at the back of the key's queue (the key must exist: call right after a
  // failed OpAcquire under the same lock). Returns the id to pass to RemoveWaiter.
  std::uint64_t Enqueue(std::string_view key, std::uint64_t hash, LockWaiter waiter);
  // Drops a waiter that timed out or disconnected; no-op when it was already granted.
  void RemoveWaiter(std::string_view key, std::uint64_t hash, std::uint64_t id);
  // Answers nil to, and drops, every waiter whose deadline is <= now. Cheap when none is
  // due (one comparison with the earliest deadline). Returns how many timed out.
  std::size_t TimeOutWaiters(std::int64_t now_ms);
  // A newcomer never jumps the queue: when an absent key still has waiters (a removal
  // nobody reported), the head is granted first. Returns the object it was granted, if any.
  Object* GrantLeftover(std::string_view key, std::uint64_t hash);

  std::optional<LockInfo> Info(std::string_view key, std::uint64_t hash, const TimeSnapshot& now);

  // Keys with parked waiters (a held lock's token lives in its object, not here).
  std::size_t tracked() const { return entries_.size(); }

  // From the shard's key events (through the router): a key is gone, so its first waiter
  // still waiting is granted it; returns the new object or nullptr.
  Object* OnKeyGone(std::string_view key, std::uint64_t hash);
  void OnCleared();

 private:
  // The parked waiters of one key, oldest first. A key has an entry exactly while its queue
  // is not empty.
  using Queue = std::deque<LockWaiter>;
  struct KeyHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view k) const { return HashKey(k); }
  };
  struct KeyEq {
    using is_transparent = void;
    bool operator()(std::string_view a, std::string_view b) const { return a == b; }
  };
  using Map = tsl::robin_map<std::string, Queue, KeyHash, KeyEq>;

  Queue& Track(std::string_view key, std::uint64_t hash);
  // Pops waiters until one takes the grant; creates the key for it. `key` must be absent.
  Object* GrantNext(std::string_view key, std::uint64_t hash, Queue& queue);

  Shard& shard_;
  const Clock& clock_;
  FencingTokens& tokens_;
  LockStats& stats_;
  Map entries_;
  std::uint64_t next_waiter_id_ = 1;
  std::int64_t earliest_deadline_ = 0;  // a lower bound of the queued deadlines; 0: none
};

// One LockTable per shard of every database (indexed by global shard index, keyspace_set.h),
// plus the shared token source and counters: fencing tokens stay strictly increasing across
// databases. Lives in ServerState next to the databases it watches (declared after them:
// destroyed first).
class LockTables {
 public:
  LockTables(KeyspaceSet& dbs, const Clock& clock);
  // A lone keyspace (unit tests).
  LockTables(Keyspace& keyspace, const Clock& clock);
  // Adds the tables of a database just created (KeyspaceSet::Ensure's hook, before it is
  // published: readers reach a table only through a shard of a published database).
  void Add(Keyspace& keyspace);
  LockTable& ForShard(int index) { return *tables_[static_cast<std::size_t>(index)]; }
  LockStats& stats() { return stats_; }
  FencingTokens& tokens() { return tokens_; }

 private:
  const Clock& clock_;
  FencingTokens tokens_;
  LockStats stats_;
  std::vector<std::unique_ptr<LockTable>> tables_;  // sized for every database; null until created
};

}  // namespace latch::store
