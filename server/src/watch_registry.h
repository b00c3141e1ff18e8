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

  void Watch(const std::string& key, Watcher* w);
  void Unwatch(const std::vector<std::string>& keys, Watcher* w);
  void Touch(std::string_view key);
  // Marks the watchers of every watched key for which `exists(key)` is true.
  template <class Pred>
  void TouchIf(Pred&& exists) {
    std::lock_guard lock(mu_);
    for (auto& [key, v] : by_key_) {
      if (!exists(std::string_view(key))) continue;
      for (Watcher* w : v) w->dirty.store(true);
    }
  }

 private:
  std::mutex mu_;
  std::unordered_map<std::string, std::vector<Watcher*>> by_key_;
  std::atomic<std::size_t> watched_{0};  // number of (key, watcher) pairs
};

}  // namespace latch
