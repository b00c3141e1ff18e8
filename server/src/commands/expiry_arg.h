#pragma once
// The one parser of expiry arguments: SET's EX/PX/EXAT/PXAT, EXPIRE/PEXPIRE/EXPIREAT/
// PEXPIREAT, LOCK.ACQUIRE/LOCK.EXTEND's ttl and the native lock scripts' TTLs. Redis's rules
// (string2ll, then its overflow checks in wall-clock milliseconds), and the result is a
// deadline on the monotonic clock, converted once with the command's snapshot.
#include <climits>
#include <cstdint>
#include <string_view>

#include "latch/clock.h"
#include "latch/protocol/int_parse.h"

namespace latch {

struct ExpiryForm {
  bool seconds = false;        // EX, EXAT, EXPIRE, EXPIREAT
  bool absolute = false;       // a Unix time: EXAT, PXAT, EXPIREAT, PEXPIREAT
  bool positive_only = false;  // SET and the locks refuse <= 0; EXPIRE deletes the key
};

enum class ExpiryStatus : std::uint8_t {
  kOk,
  kNotInteger,  // errors::kNotInteger
  kInvalid,     // "ERR invalid expire time in '<command>' command"
};

// On kOk, *deadline_ms is the monotonic deadline (>= 1; a time already past gives a
// deadline <= now, which SET stores as already expired and EXPIRE turns into a delete).
inline ExpiryStatus ParseExpiry(std::string_view arg, ExpiryForm form, const TimeSnapshot& now,
                                std::int64_t* deadline_ms) {
  std::int64_t v;
  if (!ParseInt64(arg, &v)) return ExpiryStatus::kNotInteger;
  if (form.positive_only && v <= 0) return ExpiryStatus::kInvalid;
  if (form.seconds) {
    if (v > LLONG_MAX / 1000 || v < LLONG_MIN / 1000) return ExpiryStatus::kInvalid;
    v *= 1000;
  }
  // Redis checks the sum in wall-clock milliseconds, whatever clock keeps the deadline.
  const std::int64_t base = form.absolute ? 0 : now.wall_ms;
  if (v > LLONG_MAX - base) return ExpiryStatus::kInvalid;
  std::int64_t deadline;
  if (form.absolute) {
    deadline = v <= 0 ? 0 : now.WallToMono(v);  // v - wall_ms cannot overflow for v > 0
  } else {
    deadline = now.mono_ms + v;  // v >= LLONG_MIN / 1000 * 1000 or a PEXPIRE's own v
  }
  if (deadline <= 0) deadline = 1;  // already in the past
  *deadline_ms = deadline;
  return ExpiryStatus::kOk;
}

}  // namespace latch
