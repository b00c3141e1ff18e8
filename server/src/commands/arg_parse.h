#pragma once
// Argument parsing with Redis's exact rules (string2ll): an optional '-', digits, no '+',
// no leading zeros (except "0" itself), no spaces, within int64.
#include <cctype>
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
  bool negative = false;
  if (s[0] == '-') {
    negative = true;
    if (++i == s.size()) return false;
  }
  if (s[i] < '1' || s[i] > '9') return false;
  std::uint64_t v = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    std::uint64_t d = static_cast<std::uint64_t>(s[i] - '0');
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

inline bool EqualsNoCase(std::string_view a, std::string_view lower) {
  if (a.size() != lower.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != lower[i]) return false;
  }
  return true;
}

}  // namespace latch
