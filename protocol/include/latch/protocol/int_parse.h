#pragma once
// The one string-to-int64 of latch, with Redis's string2ll rules: an optional '-', digits,
// no '+', no leading zeros (except "0" itself), no spaces, at most 20 characters, within
// int64. Command arguments, stored values (INCR), config values and scripts' numeric
// arguments all parse through it, so "05", "+5" and "-0" are refused the same everywhere.
#include <cstdint>
#include <string_view>

namespace latch {

inline bool ParseInt64(std::string_view s, std::int64_t* out) {
  if (s.empty() || s.size() > 20) return false;
  if (s.size() == 1 && s[0] == '0') {
    *out = 0;
    return true;
  }
  std::size_t i = 0;
  const bool negative = s[0] == '-';
  if (negative && ++i == s.size()) return false;
  if (s[i] < '1' || s[i] > '9') return false;
  std::uint64_t v = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    const auto d = static_cast<std::uint64_t>(s[i] - '0');
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  if (negative) {
    if (v > static_cast<std::uint64_t>(INT64_MAX) + 1) return false;
    *out = static_cast<std::int64_t>(0 - v);
  } else {
    if (v > static_cast<std::uint64_t>(INT64_MAX)) return false;
    *out = static_cast<std::int64_t>(v);
  }
  return true;
}

}  // namespace latch
