#pragma once
// WATCH bookkeeping: which connections watch which keys. Any change to a watched key marks
// its watchers dirty; their EXEC then fails. Marking happens inside the write, from the
// shard's key event, under the shard lock (key_event_router.h); WATCH registers before it
// reads the key under that same lock, and EXEC checks the flag holding every shard, so no
// change can slip between WATCH, the check and the transaction.
//
// Striped by the key's hash, as the keyspace is: a key's stripe is chosen by the top bits of
// store::HashKey, which also choose its shard, so with up to kStripes shards per database a
// stripe serves keys of one shard only. Writers on different shards never meet on a stripe's
// mutex, and writers of one shard hold its lock anyway: while anyone WATCHes, a write costs
// an uncontended mutex. Lock order: a shard lock, then a stripe's mutex (never the reverse, and
// never two stripes at once).
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace latch {

class WatchRegistry {
 public:
  struct Watcher {
    std::atomic<bool> dirty{false};
  };

  WatchRegistry() : stripes_(std::make_unique<Stripe[]>(kStripes)) {}

  // Fast path for every write command: nothing to do while nobody watches.
  bool active() const { return watched_.load(std::memory_order_acquire) > 0; }

  // Keys are (database, name): WATCH in one database ignores writes to another.
  void Watch(int db, std::string_view key, Watcher* w);
  // dbs[i] is keys[i]'s database.
  void Unwatch(const std::vector<int>& dbs, const std::vector<std::string>& keys, Watcher* w);
  // `hash`: store::HashKey(key), as the key event carries it.
  void Touch(int db, std::string_view key, std::uint64_t hash);
  // Marks the watchers of every key watched in `db` for which `exists(key)` is true.
  template <class Pred>
  void TouchIf(int db, Pred&& exists) {
    for (std::size_t i = 0; i < kStripes; ++i) {
      Stripe& s = stripes_[i];
      std::lock_guard lock(s.mu);
      for (auto& [name, watchers] : s.by_key) {
        if (name.db != db || !exists(std::string_view(name.key))) continue;
        for (Watcher* w : watchers) w->dirty.store(true);
      }
    }
  }

 private:
  static constexpr int kStripeBits = 8;
  static constexpr std::size_t kStripes = std::size_t{1} << kStripeBits;

  // A watched (database, key), with the key's hash kept to find it without hashing again.
  struct Name {
    int db;
    std::string key;
    std::uint64_t hash;
  };
  struct NameView {
    int db;
    std::string_view key;
    std::uint64_t hash;
  };
  struct NameHash {
    using is_transparent = void;
    std::size_t operator()(const Name& n) const { return Mix(n.db, n.hash); }
    std::size_t operator()(const NameView& n) const { return Mix(n.db, n.hash); }
    static std::size_t Mix(int db, std::uint64_t hash) {
      return static_cast<std::size_t>(hash ^
                                      (static_cast<std::uint64_t>(db) * 0x9E3779B97F4A7C15ULL));
    }
  };
  struct NameEq {
    using is_transparent = void;
    template <class A, class B>
    bool operator()(const A& a, const B& b) const {
      return a.db == b.db && a.hash == b.hash && std::string_view(a.key) == std::string_view(b.key);
    }
  };
  struct alignas(64) Stripe {
    std::mutex mu;
    std::unordered_map<Name, std::vector<Watcher*>, NameHash, NameEq> by_key;
  };
  Stripe& StripeFor(std::uint64_t hash) { return stripes_[hash >> (64 - kStripeBits)]; }

  std::unique_ptr<Stripe[]> stripes_;
  // Number of (key, watcher) pairs; read by every write, written only by WATCH and UNWATCH:
  // on a line of its own.
  alignas(64) std::atomic<std::size_t> watched_{0};
};

}  // namespace latch
