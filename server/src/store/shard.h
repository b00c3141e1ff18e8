#pragma once
// One shard of the keyspace: a slab of objects (slab.h), an index of their 32-bit handles
// (handle_table.h, 8-byte slots) and the timer wheel of their TTLs. Storage primitives only:
// what a write means (SET's NX/XX/GET rules, a lock grant...) is the Op layer's
// (string_ops.h, key_ops.h, lock_ops.h). Callers hold mu() around every call and pass one
// `now` per command; keys arrive with their hash (key_ref.h), never hashed again here.
//
// Every change is reported once, under the lock, to the shard's KeyEvents hook
// (key_events.h): that is how WATCH, lock waiters and counters learn of it.
//
// Expiry: every lookup checks the deadline (lazy expiry), so a key is never visible after
// its deadline whatever the wheel's progress; ExpireDue() reclaims memory in bounded steps.
//
// Access clock (OBJECT IDLETIME): Find stamps the object with the shard's clock reading,
// which the owning worker's tick (and a test's clock move) sets from the injected Clock;
// Peek looks a key up without stamping it, for what Redis reads without touching (EXISTS,
// TYPE, TTL, OBJECT, ...). New objects are stamped when created.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string_view>
#include <utility>

#include "store/handle_table.h"
#include "store/key_events.h"
#include "store/object.h"
#include "store/slab.h"
#include "store/timer_wheel.h"

namespace latch::store {

// 64-bit hash of a key: picks the shard (top bits), orders SCAN, indexes the set.
std::uint64_t HashKey(std::string_view key);

// The wheel's own heads take handles below kFirstSpaceHandle; the slab never hands those out.
static_assert(Slab::kFirstHandle >= kFirstSpaceHandle);

// The timer wheel's view of a slab: links are slab handles, nodes are objects, whose
// deadline shares its bytes with the access clock (object.h).
struct SlabSpace {
  const Slab* slab = nullptr;
  TimerNode* Node(std::uint32_t h) const { return static_cast<TimerNode*>(slab->Get(h)); }
  static std::uint32_t HandleOf(const TimerNode* n) { return Slab::HandleOf(n); }
  static std::int64_t Deadline(const TimerNode* n) {
    return static_cast<const Object*>(n)->expire_at();
  }
  static void SetDeadline(TimerNode* n, std::int64_t deadline_ms) {
    static_cast<Object*>(n)->set_packed_deadline(deadline_ms);
  }
};

// What a Put does with the key's deadline.
struct Expiry {
  enum class Mode : std::uint8_t { kClear, kKeep, kSet };
  Mode mode = Mode::kClear;
  std::int64_t deadline_ms = 0;  // monotonic, for kSet (> 0)
  static Expiry Clear() { return {}; }
  static Expiry Keep() { return {Mode::kKeep, 0}; }
  static Expiry At(std::int64_t deadline_ms) { return {Mode::kSet, deadline_ms}; }
};

class Shard {
 public:
  // A timed mutex: a client's command waits for a shard in slices and answers BUSY when a
  // script holds it too long (store/shard_guard.h: LockShard, ShardGuard; commands/key_lock.h);
  // the uncontended path is one try_lock.
  using Mutex = std::timed_mutex;

  Shard(int index, std::int64_t now_ms);
  ~Shard();
  Shard(const Shard&) = delete;
  Shard& operator=(const Shard&) = delete;

  Mutex& mu() { return mu_; }
  // Position in the keyspace: shard locks are always taken in ascending index order.
  int index() const { return index_; }

  // The live object for key, or nullptr, touched (its access clock stamped: a command that
  // reads or writes the key). An expired object found here is deleted (and when a lock
  // waiter is handed the key, the new object is returned), unless the hook says expiry is
  // on hold (CLIENT PAUSE): then it reads as missing and stays where it is.
  Object* Find(std::string_view key, std::uint64_t hash, std::int64_t now_ms) {
    Object* o = Peek(key, hash, now_ms);
    if (o != nullptr) Touch(o);
    return o;
  }
  // Find's touch, for a Peek whose command turned out to keep the key (a compare-and-delete
  // whose condition failed).
  void Touch(Object* o) const { o->Touch(access_clock_.load(std::memory_order_relaxed)); }
  // Find without the touch: Redis's LOOKUP_NOTOUCH (EXISTS, TYPE, TTL and its kin, OBJECT,
  // DEBUG OBJECT, SCAN, WATCH, LOCK.INFO) and internal lookups.
  Object* Peek(std::string_view key, std::uint64_t hash, std::int64_t now_ms) {
    HandleTable::Slot* slot;
    return PeekSlot(key, hash, now_ms, &slot);
  }
  // Peek that also gives the index slot of the object returned, for EraseFound (a
  // compare-and-delete erases without probing the index again); nullptr when the object is
  // a waiter's grant made by this lookup's lazy expiry.
  Object* PeekSlot(std::string_view key, std::uint64_t hash, std::int64_t now_ms,
                   HandleTable::Slot** slot);
  // Erase of an object PeekSlot returned, with no change to this shard in between.
  void EraseFound(HandleTable::Slot* slot, Object* o, std::uint64_t hash) {
    if (slot == nullptr) return Erase(o, hash);
    set_.EraseSlot(slot);
    OnDeleted(o, hash);
  }

  // The access clock's current reading (Object::ClockAt), for OBJECT IDLETIME.
  std::uint32_t access_clock() const { return access_clock_.load(std::memory_order_relaxed); }
  // Moves the access clock to monotonic time now_ms: the worker's tick, and a test's clock
  // move. Needs no shard lock (a reader may stamp the old or the new reading).
  void TickAccessClock(std::int64_t now_ms) {
    access_clock_.store(Object::ClockAt(now_ms), std::memory_order_relaxed);
  }
  // Creates or overwrites key with `value`; `existing` is Find()'s result for the same key
  // and command (may be nullptr). A new key may carry a LOCK.ACQUIRE fencing token (an
  // overwrite keeps the old object's token). Returns the object now holding the key.
  Object* Put(Object* existing, std::string_view key, std::uint64_t hash, std::string_view value,
              Expiry expiry, std::uint64_t token = 0);
  // Creates or overwrites key with a heap value (a hash, a sorted set), which the shard owns
  // from now on; otherwise as Put (an overwritten container is freed).
  Object* PutContainer(Object* existing, std::string_view key, std::uint64_t hash,
                       std::unique_ptr<Container> value, Expiry expiry);
  // Hands o's container to the caller (RENAME moves it): o is a plain object again, to be
  // erased by the caller.
  std::unique_ptr<Container> TakeContainer(Object* o) {
    std::unique_ptr<Container> c(o->container());
    o->set_container(false);
    --containers_;
    return c;
  }
  // Reports that o's container was changed in place (a kWritten event; the TTL stays).
  void Changed(Object* o, std::uint64_t hash) { Modified(KeyEvent::Kind::kWritten, o, hash); }
  // Sets (deadline > 0) or removes (0) the key's monotonic deadline.
  void SetDeadline(Object* o, std::uint64_t hash, std::int64_t deadline_ms);
  // Removes o (the hook is told and may re-create the key for a lock waiter).
  void Erase(Object* o, std::uint64_t hash);
  // Find + Erase in one probe of the index (DEL of many keys): true when a live key was
  // removed. An expired key is reported expired, and a waiter handed the key then loses it
  // to this delete, exactly as Find followed by Erase would do.
  bool Delete(std::string_view key, std::uint64_t hash, std::int64_t now_ms);

  // Prefetch hints for a batch of lookups (store/key_batch.h), issued a few keys ahead:
  // the index slots `hash` wants, then (once those are cached) the object of the first
  // slot there with the same hash bits. Hints only: nothing is read that the lock does not
  // already cover, and a stale hint costs a wasted load.
  void PrefetchSlot(std::uint64_t hash) const {
    std::size_t n = 1;
    if (const HandleTable::Slot* s = set_.Probe(hash, &n)) __builtin_prefetch(s);
  }
  void PrefetchObject(std::uint64_t hash) const {
    std::size_t n = 4;
    const HandleTable::Slot* s = set_.Probe(hash, &n);
    for (std::size_t i = 0; s != nullptr && i < n; ++i) {
      if (s[i].handle == 0) return;
      if (s[i].hash == static_cast<std::uint32_t>(hash)) {
        __builtin_prefetch(slab_.Get(s[i].handle));
        return;
      }
    }
  }
  void Clear();

  // The one hook for this shard's key events; nullptr reports nothing (unit tests).
  void set_events(KeyEvents* e) { events_ = e; }

  // Gives idle empty pages back to the kernel, a bounded batch (Slab::Trim). Call it on the
  // periodic tick.
  void Trim(std::int64_t now_ms) { slab_.Trim(now_ms); }
  const Slab& slab() const { return slab_; }

  // Reclaims up to `budget` keys whose deadline <= now. Returns how many.
  std::size_t ExpireDue(std::int64_t now_ms, std::size_t budget);

  // Counters published after every change, readable without the lock (INFO, DBSIZE,
  // /metrics never wait for a shard, so a busy script cannot stall them).
  std::size_t size() const { return keys_.load(std::memory_order_relaxed); }
  std::size_t expires() const { return expires_.load(std::memory_order_relaxed); }
  std::uint64_t expired_total() const { return expired_total_.load(std::memory_order_relaxed); }
  std::size_t buckets() const { return set_.bucket_count(); }

  template <class Fn>
  void ForEach(Fn&& fn) const {
    set_.ForEach([&](std::uint32_t h) { fn(At(h)); });
  }
  // SCAN's walk of the index from the keys whose hash's low 32 bits are `from` on
  // (HandleTable::ScanFrom, keyspace_scan.h): fn(object) per key, expired ones included.
  template <class Fn>
  std::uint64_t ScanFrom(std::uint32_t from, std::size_t want, std::size_t* empty_budget,
                         Fn&& fn) const {
    return set_.ScanFrom(from, want, empty_budget,
                         [&](std::uint32_t h, std::uint32_t) { fn(At(h)); });
  }

 private:
  Object* At(std::uint32_t h) const { return static_cast<Object*>(slab_.Get(h)); }
  Object* NewObject(std::string_view key, std::string_view value, std::uint64_t token);
  // The one way an object gets (Schedule; it has no deadline) or leaves (Unschedule) the
  // expiry structures: deadlines within the packed range go on the wheel, farther ones
  // (object.h) on far_. Unschedule leaves the deadline readable (an expired key's event
  // reports it).
  // Inline: every write with a TTL and every removal passes here; far_ is the rare case.
  void Schedule(Object* o, std::int64_t deadline_ms) {
    if (deadline_ms > Object::kMaxPackedDeadline) [[unlikely]] return ScheduleFar(o, deadline_ms);
    // A deadline already past fires on the next Advance whatever its value; 0 means none.
    wheel_.Schedule(o, deadline_ms < 1 ? 1 : deadline_ms);
  }
  void Unschedule(Object* o) {
    if (o->far_deadline()) [[unlikely]] return UnscheduleFar(o);
    wheel_.Cancel(o);
  }
  void ScheduleFar(Object* o, std::int64_t deadline_ms);
  void UnscheduleFar(Object* o);
  void ClearDeadline(Object* o) {
    Unschedule(o);
    o->set_deadline(0);
  }
  // Gives the object's block (and its container) back; it must be off the wheel and out of
  // the set.
  void FreeObject(Object* o) {
    if (o->is_container()) DropContainer(o);
    slab_.Free(Slab::HandleOf(o));
  }
  // Deletes o's container and makes o a string again (its value bytes are stale).
  void DropContainer(Object* o);
  // Put without the key event; *created tells whether a new object holds the key.
  Object* Place(Object* existing, std::string_view key, std::uint64_t hash, std::string_view value,
                Expiry expiry, std::uint64_t token, bool* created);
  // Whether the hook holds expiry now; remembers that a held expired key may be left.
  bool HoldsExpired(std::int64_t now_ms);
  // A write creating `key` while an expired object held by a pause still has it (a write
  // the pause did not stop, e.g. REST): that object expires first, as a lookup would have
  // done; returns the object a waiter was handed then (the write lands on it), or nullptr.
  Object* ReclaimHeld(std::string_view key, std::uint64_t hash);
  // An object found past its deadline, already unlinked, leaves: counted, hook told.
  Object* OnExpired(Object* o, std::uint64_t hash);
  // A deleted object, already out of the index, leaves: off the wheel, hook told, freed.
  void OnDeleted(Object* o, std::uint64_t hash);
  void Modified(KeyEvent::Kind kind, const Object* o, std::uint64_t hash, bool created = false);
  void Publish() {
    keys_.store(set_.size(), std::memory_order_relaxed);
    expires_.store(wheel_.size() + far_.size(), std::memory_order_relaxed);
  }

  Mutex mu_;
  int index_;
  Slab slab_;
  HandleTable set_;
  BasicTimerWheel<SlabSpace> wheel_;
  // Keys whose deadline is past the packed range, by (deadline, handle): only a PEXPIREAT
  // centuries ahead lands here, so a set is cheap enough.
  std::set<std::pair<std::int64_t, std::uint32_t>> far_;
  // Object::ClockAt of the last tick: every Find reads it, the tick writes it.
  std::atomic<std::uint32_t> access_clock_;
  KeyEvents* events_ = nullptr;
  // Objects holding a container: Clear() visits the keys only when some do, so a
  // strings-only shard is still flushed by unmapping its slab.
  std::size_t containers_ = 0;
  // A lookup left an expired key in place (expiry held): new keys check for it until the
  // wheel has reclaimed everything due.
  bool held_expired_ = false;
  std::atomic<std::size_t> keys_{0};
  std::atomic<std::size_t> expires_{0};
  std::atomic<std::uint64_t> expired_total_{0};
};

}  // namespace latch::store
