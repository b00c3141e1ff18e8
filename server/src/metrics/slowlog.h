#pragma once
// SLOWLOG: the commands that ran for at least slowlog-log-slower-than microseconds, newest
// first, at most slowlog-max-len of them (Redis's entry: id, unix time, duration, arguments
// cut to 32 and each to 128 bytes, client address, client name). Pushed only for slow
// commands, so one mutex is enough. Filled by SlowlogPush (commands/slowlog.h), read by the
// SLOWLOG command.
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

namespace latch {

struct SlowlogEntry {
  std::int64_t id = 0;
  std::int64_t unix_seconds = 0;
  std::int64_t micros = 0;
  std::vector<std::string> args;
  std::string peer, name;
};

class Slowlog {
 public:
  void Push(SlowlogEntry entry, std::size_t max_len);
  std::vector<SlowlogEntry> Newest(std::size_t count) const;
  std::size_t size() const;
  void Reset();  // the ids go on from where they were, as in Redis

 private:
  mutable std::mutex mu_;
  std::deque<SlowlogEntry> entries_;  // newest first
  std::int64_t next_id_ = 0;
};

}  // namespace latch
