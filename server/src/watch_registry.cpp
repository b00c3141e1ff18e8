#include "watch_registry.h"

#include <algorithm>

namespace latch {

void WatchRegistry::Watch(int db, const std::string& key, Watcher* w) {
  std::lock_guard lock(mu_);
  auto& v = by_key_[Name(db, key)];
  if (std::find(v.begin(), v.end(), w) != v.end()) return;
  v.push_back(w);
  watched_.fetch_add(1, std::memory_order_release);
}

void WatchRegistry::Unwatch(const std::vector<int>& dbs, const std::vector<std::string>& keys,
                            Watcher* w) {
  std::lock_guard lock(mu_);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    auto it = by_key_.find(Name(dbs[i], keys[i]));
    if (it == by_key_.end()) continue;
    auto& v = it->second;
    auto pos = std::find(v.begin(), v.end(), w);
    if (pos == v.end()) continue;
    v.erase(pos);
    watched_.fetch_sub(1, std::memory_order_release);
    if (v.empty()) by_key_.erase(it);
  }
}

void WatchRegistry::Touch(int db, std::string_view key) {
  std::lock_guard lock(mu_);
  auto it = by_key_.find(Name(db, key));
  if (it == by_key_.end()) return;
  for (Watcher* w : it->second) w->dirty.store(true);
}

}  // namespace latch
