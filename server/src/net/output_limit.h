#pragma once
// client-output-buffer-limit for one client, with Redis's rule: the client is closed when
// its pending output reaches the hard limit, or has stayed at or over the soft limit for
// more than soft_seconds (a limit of 0 is off). Pure logic, so that it can be unit tested.
#include <cstddef>
#include <cstdint>

namespace latch {

// A client that has not authenticated while the server requires it (the default user has a
// password or is off) is closed once its pending replies exceed this many bytes, whatever
// the limits: Redis's fix of CVE-2025-21605, shipped in redis-server 7.0.15 by Debian. Redis
// caps such a client's reply list at 1 KiB beyond its 16 KiB reply buffer, and a spill
// past the buffer takes a 16 KiB block, so it closes the client (writing nothing more) as
// soon as its replies exceed 16 KiB: 256 wrong AUTHs are answered, 257 are not.
inline constexpr std::size_t kUnauthenticatedOutputLimit = 16 * 1024;

struct OutputLimits {
  std::uint64_t hard = 0;
  std::uint64_t soft = 0;
  std::int64_t soft_seconds = 0;
};

class OutputLimitTracker {
 public:
  // Call whenever the pending output changes (and now and then while it does not): true
  // when the client must be closed.
  bool Exceeded(std::size_t pending, const OutputLimits& limits, std::int64_t now_ms) {
    if (limits.hard != 0 && pending >= limits.hard) return true;
    if (limits.soft == 0 || pending < limits.soft) {
      soft_since_ms_ = -1;
      return false;
    }
    if (soft_since_ms_ < 0) {
      soft_since_ms_ = now_ms;
      return false;
    }
    return now_ms - soft_since_ms_ > limits.soft_seconds * 1000;
  }

 private:
  std::int64_t soft_since_ms_ = -1;  // when pending output first reached the soft limit
};

}  // namespace latch
