#pragma once
// Case-insensitive keyword matching with the C locale's rules (only 'A'-'Z' fold), as Redis
// matches command names and options. Beside int_parse.h so that every layer can use it.
#include <cstddef>
#include <string_view>

namespace latch {

// tolower() of the C locale, inline: only 'A'-'Z' change. (The libc call, through the
// locale's table, was 4% of the server's instructions on a SET NX PX workload.)
constexpr char AsciiLower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; }

// `lower` must already be lower case (a literal such as "nx").
inline bool EqualsNoCase(std::string_view a, std::string_view lower) {
  if (a.size() != lower.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (AsciiLower(a[i]) != lower[i]) return false;
  }
  return true;
}

}  // namespace latch
