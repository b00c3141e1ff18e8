#pragma once
// total_error_replies and INFO errorstats: every error reply, counted once where it is
// written (ReplyWriter tells its ErrorObserver), by its code, the first word of the text
// ("ERR", "WRONGTYPE", "NOAUTH"...). The code is found as Redis finds it: the text up to the
// first space within its first 31 characters, else "ERR".
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include "latch/protocol/reply_writer.h"
#include "striped_counter.h"

namespace latch {

class ErrorStats final : public protocol::ErrorObserver {
 public:
  // Distinct codes tracked. Redis 7.0 keeps every code it sees; a script can mint codes
  // (redis.error_reply("X1 ..."), "X2 ..."), so past this many, new codes are no longer
  // listed (Redis 7.2 also stops at 128). total_error_replies still counts every error.
  static constexpr std::size_t kMaxCodes = 128;

  void OnErrorReply(std::string_view text) override;

  std::uint64_t total() const { return total_.load(); }
  // fn(code, count) in byte order of the code, as Redis lists them.
  void ForEach(const std::function<void(std::string_view, std::uint64_t)>& fn) const;
  void Reset();  // CONFIG RESETSTAT

  static std::string_view CodeOf(std::string_view text);

 private:
  StripedCounter total_;  // bumped on every error reply from every worker
  mutable std::mutex mu_;
  std::map<std::string, std::uint64_t, std::less<>> counts_;  // guarded by mu_
};

}  // namespace latch
