#include "scripting/script_cache.h"

namespace latch::scripting {

std::shared_ptr<const CachedScript> ScriptCache::Find(std::string_view sha) const {
  std::lock_guard lock(mu_);
  auto it = scripts_.find(sha);
  return it == scripts_.end() ? nullptr : it->second;
}

std::shared_ptr<const CachedScript> ScriptCache::Add(std::string sha, std::string body,
                                                     NativeKind native) {
  std::lock_guard lock(mu_);
  auto it = scripts_.find(sha);
  if (it != scripts_.end()) return it->second;
  auto entry = std::make_shared<const CachedScript>(CachedScript{sha, std::move(body), native});
  scripts_.emplace(std::move(sha), entry);
  return entry;
}

void ScriptCache::Clear() {
  std::lock_guard lock(mu_);
  scripts_.clear();
}

std::size_t ScriptCache::size() const {
  std::lock_guard lock(mu_);
  return scripts_.size();
}

}  // namespace latch::scripting
