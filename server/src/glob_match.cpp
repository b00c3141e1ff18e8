#include "glob_match.h"

#include <cstddef>
#include <utility>

namespace latch {
namespace {

unsigned char Fold(char c, bool nocase) {
  auto u = static_cast<unsigned char>(c);
  if (nocase && u >= 'A' && u <= 'Z') return static_cast<unsigned char>(u - 'A' + 'a');
  return u;
}

// Matches the set starting just after '[' at pattern[p] against c. Returns whether it matched
// and sets `next` to the index after the set's closing ']' (or pattern.size() if unclosed).
bool MatchSet(std::string_view pattern, std::size_t p, char c, bool nocase, std::size_t& next) {
  const std::size_t n = pattern.size();
  const unsigned char ch = Fold(c, nocase);
  bool negate = false;
  if (p < n && pattern[p] == '^') {
    negate = true;
    ++p;
  }
  bool match = false;
  while (p < n && pattern[p] != ']') {
    if (pattern[p] == '\\' && p + 1 < n) {
      // Redis compares an escaped byte inside a set exactly, even with nocase.
      if (pattern[p + 1] == c) match = true;
      p += 2;
    } else if (p + 2 < n && pattern[p + 1] == '-') {
      unsigned char lo = Fold(pattern[p], nocase);
      unsigned char hi = Fold(pattern[p + 2], nocase);
      if (lo > hi) std::swap(lo, hi);
      if (ch >= lo && ch <= hi) match = true;
      p += 3;
    } else {
      if (Fold(pattern[p], nocase) == ch) match = true;
      ++p;
    }
  }
  next = p < n ? p + 1 : n;  // past ']'
  return match != negate;
}

// Matches the single-byte element at pattern[p] (not '*') against c; `next` is set to the index
// after the element.
bool MatchOne(std::string_view pattern, std::size_t p, char c, bool nocase, std::size_t& next) {
  switch (pattern[p]) {
    case '?':
      next = p + 1;
      return true;
    case '[':
      return MatchSet(pattern, p + 1, c, nocase, next);
    case '\\':
      if (p + 1 < pattern.size()) ++p;
      [[fallthrough]];
    default:
      next = p + 1;
      return Fold(pattern[p], nocase) == Fold(c, nocase);
  }
}

}  // namespace

bool GlobMatch(std::string_view pattern, std::string_view str, bool nocase) {
  constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  std::size_t p = 0;
  std::size_t s = 0;
  // Where to resume after the last '*': the pattern index after it and the next string index
  // that star would swallow up to.
  std::size_t star_p = kNone;
  std::size_t star_s = 0;
  while (s < str.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      while (p < pattern.size() && pattern[p] == '*') ++p;
      if (p == pattern.size()) return true;  // a trailing star takes the rest
      star_p = p;
      star_s = s;
      continue;
    }
    std::size_t next = 0;
    if (p < pattern.size() && MatchOne(pattern, p, str[s], nocase, next)) {
      p = next;
      ++s;
      continue;
    }
    if (star_p == kNone) return false;
    // Let the last star swallow one more byte and retry the rest of the pattern from there.
    p = star_p;
    s = ++star_s;
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

}  // namespace latch
