#pragma once
// The server-wide script cache: SHA1 (lowercase hex) -> body, shared by every connection
// and thread (SCRIPT LOAD on one connection, EVALSHA on another). Entries are immutable and
// shared, so a reader keeps its entry alive across a concurrent SCRIPT FLUSH.
#include <cstddef>
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
  // `sha` must be lowercase (see NormalizeSha).
  std::shared_ptr<const CachedScript> Find(std::string_view sha) const;
  // Adds (or returns the existing) entry.
  std::shared_ptr<const CachedScript> Add(std::string sha, std::string body, NativeKind native);
  void Clear();
  std::size_t size() const;

 private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };
  mutable std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<const CachedScript>, Hash, std::equal_to<>>
      scripts_;
};

}  // namespace latch::scripting
