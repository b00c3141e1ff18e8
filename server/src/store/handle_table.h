#pragma once
// A shard's index: an open-addressing robin-hood table of 8-byte slots, each a 32-bit slab
// handle (0 = empty) and the low 32 bits of its key's hash.
//
// Why not tsl::robin_set<uint32_t>: its bucket is a 16-bit probe distance, a flag and the
// value (8 bytes) with no hash, so every probe that meets another key must read that key
// from the slab (a likely cache miss with a million keys), and a rehash reads every key. Storing the hash's low bits instead of the distance costs nothing:
// the distance follows from the hash (the slot it wanted), a probe reads a key only when 32
// bits of hash match, and a rehash never touches a key.
//
// - The wanted slot is the hash's low 32 bits scaled to the slot count (one multiply, "fast
//   range"), so the count need not be a power of two: the table grows by half under a 0.9
//   load factor (1.1 to 1.7 slots per key; power-of-two tables at a 0.5 load leave 2 to 4).
//   The shard's index in the keyspace comes from the hash's top bits, which this ignores.
// - Robin hood insertion (an entry passes those closer to their wanted slot), lookups stop
//   at the first entry closer to its own slot than the probe is, deletion shifts the
//   following run back by one (no tombstones).
// - Not thread-safe: one table per shard, used under the shard's lock.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <string_view>
#include <utility>

namespace latch::store {

class HandleTable {
 public:
  struct Slot {
    std::uint32_t handle;  // 0 = empty
    std::uint32_t hash;    // low 32 bits of the key's hash
  };

  HandleTable() = default;
  ~HandleTable() { std::free(slots_); }
  HandleTable(const HandleTable&) = delete;
  HandleTable& operator=(const HandleTable&) = delete;

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::size_t bucket_count() const { return count_; }

  // The slot holding the key, or nullptr. key_of(handle) returns the key of a handle; it is
  // called only for entries whose stored hash matches.
  template <class KeyOf>
  Slot* Find(std::string_view key, std::uint64_t hash, KeyOf&& key_of) {
    if (size_ == 0) return nullptr;
    const auto h32 = static_cast<std::uint32_t>(hash);
    std::size_t pos = Wanted(h32);
    for (std::size_t dist = 0;; ++dist) {
      Slot& s = slots_[pos];
      if (s.handle == 0 || Distance(s, pos) < dist) return nullptr;
      if (s.hash == h32 && key_of(s.handle) == key) return &s;
      pos = Next(pos);
    }
  }

  // The slots a lookup of `hash` reads first (up to `max`, fewer at the array's end), for
  // a prefetch; nullptr when the table is empty. Entries may move on any change.
  const Slot* Probe(std::uint64_t hash, std::size_t* max) const {
    if (count_ == 0) return nullptr;
    const std::size_t pos = Wanted(static_cast<std::uint32_t>(hash));
    *max = std::min(*max, count_ - pos);
    return &slots_[pos];
  }

  // Makes room for one more entry, so that the next Insert cannot throw (call it before
  // allocating what will be inserted).
  void ReserveOne() {
    if (size_ + 1 > Capacity()) Grow();
  }

  // Adds a handle whose key is not in the table.
  void Insert(std::uint32_t handle, std::uint64_t hash) {
    if (size_ + 1 > Capacity()) Grow();
    Place(Slot{handle, static_cast<std::uint32_t>(hash)});
    ++size_;
  }

  // Removes the entry found by Find.
  void EraseSlot(Slot* s) {
    std::size_t pos = static_cast<std::size_t>(s - slots_);
    std::size_t next = Next(pos);
    while (slots_[next].handle != 0 && Distance(slots_[next], next) > 0) {
      slots_[pos] = slots_[next];
      pos = next;
      next = Next(next);
    }
    slots_[pos] = Slot{0, 0};
    --size_;
  }

  // Removes `handle` (its key hashed to `hash`); the probe compares handles, not keys.
  // Returns false when absent.
  bool Erase(std::uint32_t handle, std::uint64_t hash) {
    if (size_ == 0) return false;
    std::size_t pos = Wanted(static_cast<std::uint32_t>(hash));
    for (std::size_t dist = 0;; ++dist) {
      Slot& s = slots_[pos];
      if (s.handle == 0 || Distance(s, pos) < dist) return false;
      if (s.handle == handle) {
        EraseSlot(&s);
        return true;
      }
      pos = Next(pos);
    }
  }

  // Drops every entry and the slot array.
  void Reset() {
    std::free(slots_);
    slots_ = nullptr;
    count_ = size_ = 0;
  }

  template <class Fn>
  void ForEach(Fn&& fn) const {
    for (std::size_t i = 0; i < count_; ++i) {
      if (slots_[i].handle != 0) fn(slots_[i].handle);
    }
  }

  // SCAN's walk (store/keyspace_scan.h). Robin hood keeps every run of entries ordered by the
  // slot each wants, which is monotonic in the hash's low 32 bits ("fast range"); so the
  // entries whose hash bits are >= `from` come in ascending order of their wanted slot
  // (entries wanting one slot come together, in no set order) from `from`'s slot on, the
  // run that wraps past the array's end last. Calls visit(handle, hash bits) for each, and
  // stops at the first slot boundary once `want` were visited, or at an empty slot once
  // *empty_budget (decremented per empty slot) ran out. Returns where to resume: every
  // entry whose hash bits are >= from and below the value returned was visited; kScanEnd
  // when none is left. Linear in what it visits and skips (entries displaced from slots
  // before `from`'s, empty slots), never in the table's size.
  static constexpr std::uint64_t kScanEnd = std::uint64_t{1} << 32;
  template <class Visit>
  std::uint64_t ScanFrom(std::uint32_t from, std::size_t want, std::size_t* empty_budget,
                         Visit&& visit) const {
    if (size_ == 0) return kScanEnd;
    const std::size_t first = Wanted(from);
    std::size_t visited = 0;
    std::size_t group = count_;  // the wanted slot of the entries being visited
    // p runs from `first` to the array's end, then (wrapped) from 0 along the run that
    // crossed the end; the load factor leaves an empty slot, so the loop ends by 2 * count_.
    for (std::size_t v = first; v < 2 * count_; ++v) {
      const bool wrapped = v >= count_;
      const std::size_t p = wrapped ? v - count_ : v;
      const Slot& s = slots_[p];
      if (s.handle == 0) {
        // A run never crosses an empty slot: every entry wanting a slot up to p lies before it.
        if (wrapped || p + 1 == count_) return kScanEnd;
        if (visited >= want || *empty_budget == 0) return FirstHashOf(p + 1);
        --*empty_budget;
        continue;
      }
      const std::size_t wanted = Wanted(s.hash);
      if (wrapped && wanted <= p) return kScanEnd;  // past the run that crossed the end
      // Before the wrap, an entry wanting a later slot than its own came round the end: it
      // is visited after the wrap. Entries wanting a slot before `from`'s are not ours.
      if ((!wrapped && wanted > p) || wanted < first) continue;
      if (wanted != group) {
        if (visited >= want) return FirstHashOf(wanted);
        group = wanted;
      }
      if (wanted == first && s.hash < from) continue;
      visit(s.handle, s.hash);
      ++visited;
    }
    return kScanEnd;
  }

  static constexpr double kMaxLoad = 0.9;

 private:
  // The smallest hash bits that want `slot` or a later one (kScanEnd for slot == count_).
  std::uint64_t FirstHashOf(std::size_t slot) const {
    using Wide = unsigned __int128;  // slot << 32 overflows 64 bits for slot == 2^32
    return static_cast<std::uint64_t>(((Wide{slot} << 32) + count_ - 1) / count_);
  }
  std::size_t Wanted(std::uint32_t h32) const {
    return static_cast<std::size_t>((std::uint64_t{h32} * count_) >> 32);
  }
  std::size_t Next(std::size_t pos) const { return pos + 1 == count_ ? 0 : pos + 1; }
  // How far the entry at pos is from the slot it wanted.
  std::size_t Distance(const Slot& s, std::size_t pos) const {
    const std::size_t wanted = Wanted(s.hash);
    return pos >= wanted ? pos - wanted : pos + count_ - wanted;
  }
  std::size_t Capacity() const { return static_cast<std::size_t>(count_ * kMaxLoad); }

  void Place(Slot entry) {
    std::size_t pos = Wanted(entry.hash);
    for (std::size_t dist = 0;; ++dist) {
      Slot& s = slots_[pos];
      if (s.handle == 0) {
        s = entry;
        return;
      }
      const std::size_t d = Distance(s, pos);
      if (d < dist) {
        std::swap(s, entry);
        dist = d;
      }
      pos = Next(pos);
    }
  }

  void Grow() {
    const std::size_t count = count_ < 16 ? 16 : count_ + count_ / 2;
    if (count > (std::size_t{1} << 32)) throw std::bad_alloc();  // Wanted() scales 32 bits
    auto* slots = static_cast<Slot*>(std::calloc(count, sizeof(Slot)));
    if (slots == nullptr) throw std::bad_alloc();
    Slot* old = slots_;
    const std::size_t old_count = count_;
    slots_ = slots;
    count_ = count;
    for (std::size_t i = 0; i < old_count; ++i) {
      if (old[i].handle != 0) Place(old[i]);
    }
    std::free(old);
  }

  Slot* slots_ = nullptr;
  std::size_t count_ = 0;
  std::size_t size_ = 0;
};

}  // namespace latch::store
