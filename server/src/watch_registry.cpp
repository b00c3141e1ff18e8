#include "watch_registry.h"

#include <algorithm>

namespace latch {

void WatchRegistry::Watch(const std::string& key, Watcher* w) {
  std::lock_guard lock(mu_);
  auto& v = by_key_[key];
  if (std::find(v.begin(), v.end(), w) != v.end()) return;
  v.push_back(w);
  watched_.fetch_add(1, std::memory_order_release);
}

void WatchRegistry::Unwatch(const std::vector<std::string>& keys, Watcher* w) {
  std::lock_guard lock(mu_);
  for (const auto& key : keys) {
    auto it = by_key_.find(key);
    if (it == by_key_.end()) continue;
    auto& v = it->second;
    auto pos = std::find(v.begin(), v.end(), w);
    if (pos == v.end()) continue;
    v.erase(pos);
    watched_.fetch_sub(1, std::memory_order_release);
    if (v.empty()) by_key_.erase(it);
  }
}

void WatchRegistry::Touch(std::string_view key) {
  std::lock_guard lock(mu_);
  auto it = by_key_.find(std::string(key));
  if (it == by_key_.end()) return;
  for (Watcher* w : it->second) w->dirty.store(true);
}

}  // namespace latch
