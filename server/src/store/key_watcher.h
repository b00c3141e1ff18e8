#pragma once
// The hook through which a shard tells the lock table that a key left the keyspace, so that
// a lock's queued waiters can be granted the key at once (no polling, no tick to wait for).
//
// Contract: called with the shard's lock held, after the object was unlinked from the hash
// set and the timer wheel but before it is freed, so `key` stays valid for the whole call.
// The watcher may create the key anew (Shard::Set + SetDeadline) and returns that object,
// or nullptr when the key stays absent. A shard calls its watcher only while one is
// installed (Shard::set_watcher), which the lock table does only while it tracks a key of
// that shard: a shard without locks pays one predictable branch per removal.
#include <cstdint>
#include <string_view>

namespace latch::store {

class Object;
class Shard;

class KeyWatcher {
 public:
  enum class Reason { kDeleted, kExpired };
  virtual ~KeyWatcher() = default;
  virtual Object* OnKeyGone(Shard& shard, std::string_view key, std::uint64_t hash,
                            Reason reason) = 0;
  // Every key of the shard is gone at once (FLUSHALL / FLUSHDB).
  virtual void OnCleared(Shard& shard) = 0;
};

}  // namespace latch::store
