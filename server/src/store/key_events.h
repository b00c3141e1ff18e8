#pragma once
// Key events: the one place where a shard reports that a key changed. Every write of every
// command, script, transaction, lock hand-off and expiry goes through a Shard primitive
// (Put, SetDeadline, Erase, lazy and active expiry, Clear), and each primitive reports here,
// under the shard's lock, exactly once. WATCH, lock waiters and the keyspace counters listen
// here (server/src/key_event_router.h), so a new command cannot forget any of them; an
// append-only journal hangs off the same hook and logs `KeyEvent` as the effective write
// (a kWritten event carries the object after the write: value and absolute deadline).
//
// Contract for implementations: called with the shard's lock held (do not take another
// shard's lock; other locks must come after shard locks in the lock order). `key` and
// `object` stay valid for the call only. OnGone runs after the object left the index and the
// timer wheel but before its block is freed; it may create the key anew (a lock waiter's
// grant, through Shard::Put, which reports its own kWritten) and returns that object, or
// nullptr when the key stays absent.
#include <cstdint>
#include <string_view>

namespace latch::store {

class Object;
class Shard;

struct KeyEvent {
  enum class Kind : std::uint8_t {
    kWritten,        // value (and deadline) set by Put: created or overwritten
    kExpireChanged,  // deadline set or removed by SetDeadline; the value is unchanged
    kDeleted,        // removed by a command (DEL, a release, an EXPIRE in the past...)
    kExpired,        // removed because its deadline passed (lazy or active expiry)
  };
  Kind kind;
  std::string_view key;
  std::uint64_t hash;
  // kWritten / kExpireChanged: the object after the change (its deadline is on the
  // monotonic clock: Object::expire_at()). kDeleted / kExpired: the object leaving.
  const Object* object;
  // kWritten: the key did not exist before this write (a new object, not an overwrite).
  bool created = false;

  bool gone() const { return kind == Kind::kDeleted || kind == Kind::kExpired; }
};

class KeyEvents {
 public:
  virtual ~KeyEvents() = default;
  virtual void OnModified(Shard& shard, const KeyEvent& e) = 0;
  virtual Object* OnGone(Shard& shard, const KeyEvent& e) = 0;
  // The shard is about to lose every key at once (FLUSHALL / FLUSHDB): its keys can still
  // be looked up. WATCH marks only the watched keys that exist, as Redis does.
  virtual void OnClearing(Shard& /*shard*/) {}
  // Every key of the shard is gone at once (FLUSHALL / FLUSHDB); no per-key events.
  virtual void OnCleared(Shard& shard) = 0;
  // Whether expiry is on hold at `now_ms` (CLIENT PAUSE, as in Redis): an expired key then
  // reads as missing but stays, so a paused server hands no lock to a waiter. Asked only
  // when a lookup meets an expired key.
  virtual bool ExpiryHeld(std::int64_t /*now_ms*/) const { return false; }
};

}  // namespace latch::store
