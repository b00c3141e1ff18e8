#pragma once
// Argument parsing with Redis's exact rules: integers (ParseInt64, string2ll's rules, from
// latch/protocol/int_parse.h), case-folded keywords (AsciiLower and EqualsNoCase from
// latch/protocol/case_fold.h).
#include <cstdint>
#include <string_view>

#include "latch/protocol/case_fold.h"
#include "latch/protocol/int_parse.h"

namespace latch {

// A keyword of up to 8 bytes folded to lower case and packed into an integer, so that an
// option can be matched with one switch: `switch (FoldWord(opt)) { case Word("nx"): ...}`.
// Longer words fold to 0, which no Word() equals.
//
// The packing cannot tell a missing byte from a NUL byte ("NX\0" would pack as "NX"), so a
// word holding a NUL folds to 0 too: an option matches only when its bytes are exactly the
// keyword's, as EqualsNoCase compares. (Redis 7.0 compares options as C strings and so takes
// "NX\0" and "NX\0junk" for NX; latchd refuses them with -ERR syntax error, issue 24.)
constexpr std::uint64_t Word(std::string_view lower) {
  std::uint64_t w = 0;
  for (std::size_t i = 0; i < lower.size() && i < 8; ++i) {
    if (lower[i] == '\0') return 0;
    w |= std::uint64_t{static_cast<unsigned char>(lower[i])} << (8 * i);
  }
  return lower.size() > 8 ? 0 : w;
}
inline std::uint64_t FoldWord(std::string_view s) {
  if (s.size() > 8) return 0;
  std::uint64_t w = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\0') return 0;
    w |= std::uint64_t{static_cast<unsigned char>(AsciiLower(s[i]))} << (8 * i);
  }
  return w;
}

}  // namespace latch
