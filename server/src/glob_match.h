#pragma once
// Glob-style matching with Redis's stringmatchlen() semantics (KEYS, SCAN MATCH, CONFIG GET,
// PSUBSCRIBE patterns):
//   *       any run of bytes, also empty
//   ?       exactly one byte
//   [abc]   one byte of the set; [^abc] one byte not in it; [a-z] a range (reversed bounds are
//           swapped); \x inside a set is a literal x; a set missing its ']' ends at the pattern's
//           end; "[]" is an empty set; an escaped byte in a set is compared case-sensitively
//   \x      a literal x (a trailing '\' is a literal backslash)
// nocase folds ASCII letters only, as Redis does with tolower() in the C locale.
//
// Unlike Redis (recursive on '*', with a nesting limit), this runs in a loop with O(1) state and
// backtracks only to the last '*': every other element consumes exactly one byte, so the last
// star is the only choice point that matters. Worst case O(|pattern| * |str|) time, no recursion.
#include <string_view>

namespace latch {

bool GlobMatch(std::string_view pattern, std::string_view str, bool nocase);

}  // namespace latch
