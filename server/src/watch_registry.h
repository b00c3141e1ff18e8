#pragma once
// WATCH bookkeeping: which connections watch which keys. Any change to a watched key marks
// its watchers dirty; their EXEC then fails. Marking happens inside the write, from the
// shard's key event, under the shard lock (key_event_router.h); WATCH registers before it
// reads the key under that same lock, and EXEC checks the flag holding every shard, so no
// change can slip between WATCH, the check and the transaction. Lock order: a shard lock,
// then mu_ (never the reverse).
#include <atomic>
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

  // Fast path for every write command: nothing to do while nobody watches.
  bool active() const { return watched_.load(std::memory_order_acquire) > 0; }

  // Keys are (database, name): WATCH in one database ignores writes to another.
  void Watch(int db, const std::string& key, Watcher* w);
  // dbs[i] is keys[i]'s database.
  void Unwatch(const std::vector<int>& dbs, const std::vector<std::string>& keys, Watcher* w);
  void Touch(int db, std::string_view key);
  // Marks the watchers of every key watched in `db` for which `exists(key)` is true.
  template <class Pred>
  void TouchIf(int db, Pred&& exists) {
    std::lock_guard lock(mu_);
    const std::string prefix = Name(db, {});
    for (auto& [name, v] : by_key_) {
      if (name.compare(0, prefix.size(), prefix) != 0) continue;
      if (!exists(std::string_view(name).substr(prefix.size()))) continue;
      for (Watcher* w : v) w->dirty.store(true);
    }
  }

 private:
  // The registry's name of (db, key): the database's four bytes, then the key.
  static std::string Name(int db, std::string_view key) {
    std::string n(reinterpret_cast<const char*>(&db), sizeof db);
    n.append(key);
    return n;
  }

  std::mutex mu_;
  std::unordered_map<std::string, std::vector<Watcher*>> by_key_;
  std::atomic<std::size_t> watched_{0};  // number of (key, watcher) pairs
};

}  // namespace latch
