#include "watch_registry.h"

#include <algorithm>

#include "store/shard.h"

namespace latch {

void WatchRegistry::Watch(int db, std::string_view key, Watcher* w) {
  const std::uint64_t hash = store::HashKey(key);
  Stripe& s = StripeFor(hash);
  std::lock_guard lock(s.mu);
  auto it = s.by_key.find(NameView{db, key, hash});
  if (it == s.by_key.end()) it = s.by_key.try_emplace(Name{db, std::string(key), hash}).first;
  auto& v = it->second;
  if (std::find(v.begin(), v.end(), w) != v.end()) return;
  v.push_back(w);
  watched_.fetch_add(1, std::memory_order_release);
}

void WatchRegistry::Unwatch(const std::vector<int>& dbs, const std::vector<std::string>& keys,
                            Watcher* w) {
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const std::uint64_t hash = store::HashKey(keys[i]);
    Stripe& s = StripeFor(hash);
    std::lock_guard lock(s.mu);
    auto it = s.by_key.find(NameView{dbs[i], keys[i], hash});
    if (it == s.by_key.end()) continue;
    auto& v = it->second;
    auto pos = std::find(v.begin(), v.end(), w);
    if (pos == v.end()) continue;
    v.erase(pos);
    watched_.fetch_sub(1, std::memory_order_release);
    if (v.empty()) s.by_key.erase(it);
  }
}

void WatchRegistry::Touch(int db, std::string_view key, std::uint64_t hash) {
  Stripe& s = StripeFor(hash);
  std::lock_guard lock(s.mu);
  auto it = s.by_key.find(NameView{db, key, hash});
  if (it == s.by_key.end()) return;
  for (Watcher* w : it->second) w->dirty.store(true);
}

}  // namespace latch
