#pragma once
// The server-wide script cache: SHA1 (lowercase hex) -> body, shared by every connection
// and thread (SCRIPT LOAD on one connection, EVALSHA on another). Entries are immutable and
// shared, so a reader keeps its entry alive across a concurrent SCRIPT FLUSH.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "scripting/native_scripts.h"

namespace latch::scripting {

struct CachedScript {
  std::string sha;
  std::string body;
  NativeKind native = NativeKind::kNone;  // recognised library script, else kNone
};

class ScriptCache {
 public:
  ScriptCache();

  // `sha` must be lowercase (see NormalizeSha).
  std::shared_ptr<const CachedScript> Find(std::string_view sha) const;
  // The same answer from the calling thread's own copy of the entries it has used, so that
  // EVALSHA takes no lock and touches no shared reference count. The entry stays valid
  // until this thread's next FindLocal() call. A Clear() reaches every copy through the
  // generation counter: a copy older than the last Clear() is dropped before it is read.
  const CachedScript* FindLocal(std::string_view sha) const;
  // Adds (or returns the existing) entry.
  std::shared_ptr<const CachedScript> Add(std::string sha, std::string body, NativeKind native);
  void Clear();
  std::size_t size() const;

 private:
  // SHAs are hex digests: their first 16 characters, packed, are already well mixed.
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const {
      std::uint64_t h = 0;
      for (std::size_t i = 0; i < s.size() && i < 16; ++i) h = h * 31 + static_cast<unsigned char>(s[i]);
      return h * 0x9E3779B97F4A7C15ULL;
    }
  };
  struct ShaEq {
    using is_transparent = void;
    bool operator()(std::string_view a, std::string_view b) const { return a == b; }
  };
  friend struct LocalScripts;
  const std::uint64_t id_;  // tells apart the caches of servers in one process
  std::atomic<std::uint64_t> generation_{0};
  mutable std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<const CachedScript>, Hash, std::equal_to<>>
      scripts_;
};

}  // namespace latch::scripting
