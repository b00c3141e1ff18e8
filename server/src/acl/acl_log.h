#pragma once
// ACL LOG: the last refused commands and AUTH failures (Redis 7.0's ACL log, 128 entries).
// A refusal like a recent one (same reason, context, object and user, within 60 s) counts
// on that entry instead of adding one.
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

namespace latch::acl {

struct LogEntry {
  std::uint64_t count = 1;
  std::string reason;   // "command", "key", "channel", "auth"
  std::string context;  // "toplevel", "multi", "lua"
  std::string object;   // the command, key, channel or (auth) "AUTH"
  std::string username;
  std::int64_t created_ms = 0;  // wall clock
  std::string client_info;      // CLIENT INFO's line of the refused client
};

class AclLog {
 public:
  void Add(LogEntry e, std::int64_t now_ms);
  std::vector<LogEntry> Newest(std::size_t n) const;  // newest first
  void Reset();

 private:
  static constexpr std::size_t kMaxLen = 128;
  mutable std::mutex mu_;
  std::deque<LogEntry> entries_;  // newest first
};

}  // namespace latch::acl
