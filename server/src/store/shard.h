#pragma once
// One shard of the keyspace: a slab of objects (slab.h), an index of their 32-bit handles
// (handle_table.h, 8-byte slots) and the timer wheel of their TTLs. This is the Op layer: it never sees a socket or a reply; callers (the
// command handlers) hold mu() around every call and pass one `now` per command.
//
// Expiry: every lookup checks the deadline (lazy expiry), so a key is never visible after
// its deadline whatever the wheel's progress; ExpireDue() reclaims memory in bounded steps.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string_view>

#include "store/handle_table.h"
#include "store/key_watcher.h"
#include "store/object.h"
#include "store/slab.h"
#include "store/timer_wheel.h"

namespace latch::store {

// 64-bit hash of a key: picks the shard (top bits), orders SCAN, indexes the set.
std::uint64_t HashKey(std::string_view key);

// The wheel's own heads take handles below kFirstSpaceHandle; the slab never hands those out.
static_assert(Slab::kFirstHandle >= kFirstSpaceHandle);

// The timer wheel's view of a slab: links are slab handles.
struct SlabSpace {
  const Slab* slab = nullptr;
  TimerNode* Node(std::uint32_t h) const { return static_cast<TimerNode*>(slab->Get(h)); }
  static std::uint32_t HandleOf(const TimerNode* n) { return Slab::HandleOf(n); }
};

// The journal's view of a shard's changes (journal/persistence.h), called under the lock with
// the key's resulting state. A narrow interim hook until the store reports key events itself.
class ShardJournal {
 public:
  virtual ~ShardJournal() = default;
  virtual void Modified(const Object& o) = 0;
  virtual void Gone(std::string_view key) = 0;
  virtual void Cleared(const Shard& shard) = 0;
};

class Shard {
 public:
  explicit Shard(std::int64_t now_ms);
  ~Shard();
  Shard(const Shard&) = delete;
  Shard& operator=(const Shard&) = delete;

  std::mutex& mu() { return mu_; }

  // The live object for key, or nullptr. An expired object found here is deleted (and
  // when a watcher hands the key to a lock waiter, the new object is returned).
  Object* Find(std::string_view key, std::uint64_t hash, std::int64_t now_ms);
  // Creates or overwrites key. With keep_ttl the existing deadline stays, otherwise the key
  // no longer expires (SET semantics). `existing` is Find()'s result for the same key and
  // command (may be nullptr). Returns the object now holding the key.
  Object* Set(Object* existing, std::string_view key, std::string_view value, bool keep_ttl);
  // Creates an absent key that carries a LOCK.ACQUIRE fencing token (object.h).
  Object* CreateLock(std::string_view key, std::string_view owner, std::uint64_t token);
  // Sets (deadline > 0) or removes (0) the key's monotonic deadline.
  void SetDeadline(Object* o, std::int64_t deadline_ms);
  // Removes o (the watcher, if any, is told and may re-create the key for a waiter).
  void Erase(Object* o);
  void Clear();

  // Installed by the lock table while it tracks keys of this shard; nullptr otherwise.
  void set_watcher(KeyWatcher* w) { watcher_ = w; }
  void set_journal(ShardJournal* j) { journal_ = j; }
  // Counts keys with a fencing token that expired (LOCK.ACQUIRE leases that ran out).
  void set_expired_lock_counter(std::atomic<std::uint64_t>* c) { expired_locks_ = c; }

  // Gives idle empty pages back to the kernel, a bounded batch (Slab::Trim). Call it on the
  // periodic tick.
  void Trim(std::int64_t now_ms) { slab_.Trim(now_ms); }
  const Slab& slab() const { return slab_; }

  // Reclaims up to `budget` keys whose deadline <= now. Returns how many.
  std::size_t ExpireDue(std::int64_t now_ms, std::size_t budget);

  std::size_t size() const { return set_.size(); }
  std::size_t buckets() const { return set_.bucket_count(); }
  std::size_t expires() const { return wheel_.size(); }
  std::uint64_t expired_total() const { return expired_total_; }
  // Counts every change to the shard (set, delete, TTL change, expiry): WATCH compares it
  // before and after a write command to learn whether the command changed anything.
  std::uint64_t mutations() const { return mutations_; }

  template <class Fn>
  void ForEach(Fn&& fn) const {
    set_.ForEach([&](std::uint32_t h) { fn(At(h)); });
  }

 private:
  Object* At(std::uint32_t h) const { return static_cast<Object*>(slab_.Get(h)); }
  Object* NewObject(std::string_view key, std::string_view value, std::uint64_t token);
  // Gives the object's block back; it must be off the wheel and out of the set.
  void FreeObject(Object* o) { slab_.Free(Slab::HandleOf(o)); }
  // An object found past its deadline, already unlinked, leaves: counted, watcher told.
  Object* OnExpired(Object* o, std::uint64_t hash);

  std::mutex mu_;
  Slab slab_;
  HandleTable set_;
  BasicTimerWheel<SlabSpace> wheel_;
  std::uint64_t expired_total_ = 0;
  std::uint64_t mutations_ = 0;
  KeyWatcher* watcher_ = nullptr;
  ShardJournal* journal_ = nullptr;
  std::atomic<std::uint64_t>* expired_locks_ = nullptr;
};

}  // namespace latch::store
