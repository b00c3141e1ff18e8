#include "scripting/script_cache.h"

namespace latch::scripting {

namespace {
std::atomic<std::uint64_t> next_cache_id{1};
// Bounds a thread's copy when clients load many distinct scripts.
constexpr std::size_t kLocalMaxScripts = 1024;
}  // namespace

// One per thread: the entries this thread has looked up, for the cache `owner` as of
// `generation`.
struct LocalScripts {
  std::uint64_t owner = 0;
  std::uint64_t generation = 0;
  std::unordered_map<std::string, std::shared_ptr<const CachedScript>, ScriptCache::Hash,
                     ScriptCache::ShaEq>
      scripts;
};

ScriptCache::ScriptCache() : id_(next_cache_id.fetch_add(1)) {}

const CachedScript* ScriptCache::FindLocal(std::string_view sha) const {
  thread_local LocalScripts local;
  const std::uint64_t generation = generation_.load(std::memory_order_acquire);
  if (local.owner != id_ || local.generation != generation ||
      local.scripts.size() >= kLocalMaxScripts) {
    local.scripts.clear();
    local.owner = id_;
    local.generation = generation;
  }
  if (auto it = local.scripts.find(sha); it != local.scripts.end()) return it->second.get();
  std::shared_ptr<const CachedScript> found = Find(sha);
  if (found == nullptr) return nullptr;  // misses are not remembered: a SCRIPT LOAD may follow
  return local.scripts.emplace(std::string(sha), std::move(found)).first->second.get();
}

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
  generation_.fetch_add(1, std::memory_order_release);
}

std::size_t ScriptCache::size() const {
  std::lock_guard lock(mu_);
  return scripts_.size();
}

}  // namespace latch::scripting
