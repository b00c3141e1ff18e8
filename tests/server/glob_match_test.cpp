// GlobMatch against Redis's stringmatchlen() behaviour (checked with redis-server 7.0 KEYS and
// CONFIG GET), plus patterns that make a backtracking matcher explode.
#include "glob_match.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

namespace latch {
namespace {

struct GlobCase {
  const char* pattern;
  const char* str;
  bool nocase;
  bool match;
};

TEST(GlobMatchTest, MatchesLikeRedis) {
  const GlobCase cases[] = {
      {"", "", false, true},
      {"", "a", false, false},
      {"*", "", false, true},
      {"*", "anything", false, true},
      {"**", "", false, true},
      {"a*", "a", false, true},
      {"a*", "b", false, false},
      {"*b", "aab", false, true},
      {"*b", "aba", false, false},
      {"a*b*c", "axxbyyc", false, true},
      {"a*b*c", "axxbyy", false, false},
      {"h?llo", "hello", false, true},
      {"h?llo", "hllo", false, false},
      {"?", "", false, false},
      {"h[ae]llo", "hallo", false, true},
      {"h[ae]llo", "hillo", false, false},
      {"h[^e]llo", "hallo", false, true},
      {"h[^e]llo", "hello", false, false},
      {"h[a-b]llo", "hbllo", false, true},
      {"h[a-b]llo", "hcllo", false, false},
      {"h[b-a]llo", "hallo", false, true},  // reversed range bounds are swapped
      {"[a-]", "]", false, true},           // "a-]" is the range ']'..'a'
      {"x[]y", "xy", false, false},         // "[]" is an empty set
      {"x[]y", "x]y", false, false},
      {"x[^]y", "xzy", false, true},  // negated empty set matches any byte
      {"po[]rt", "port", true, false},
      {"po[^]rt", "port", true, false},
      {"por[t", "port", false, true},  // unclosed set runs to the end
      {"por[^", "porx", false, true},
      {"port[", "port", false, false},
      {"[", "x", false, false},
      {"[\\]]", "]", false, true},  // escaped ']' inside a set
      {"[\\-a]", "-", false, true},
      {"a\\*b", "a*b", false, true},
      {"a\\*b", "axb", false, false},
      {"a\\?", "a?", false, true},
      {"a\\", "a\\", false, true},  // a trailing backslash is literal
      {"\\[x]", "[x]", false, true},
      {"HELLO", "hello", false, false},
      {"HELLO", "hello", true, true},
      {"H[A-Z]LLO", "hello", true, true},
      {"[P]ort", "port", true, true},
      {"[O-Q]ort", "port", true, true},
      {"\\Port", "port", true, true},     // escape outside a set folds case
      {"[\\P]ort", "port", true, false},  // escape inside a set does not (as Redis)
      {"[\\p]ort", "port", true, true},
      {"*[\\P]ort", "cluster-announce-port", true, false},
      {"P*", "protected-mode", true, true},
      {"*a*a*a*b", "aaaaaaaab", false, true},
      {"*a*a*a*b", "aaaaaaaaa", false, false},
      {"user:*:lock", "user:42:lock", false, true},
      {"user:*:lock", "user:42:lock:x", false, false},
  };
  for (const GlobCase& c : cases) {
    EXPECT_EQ(GlobMatch(c.pattern, c.str, c.nocase), c.match)
        << "pattern '" << c.pattern << "' string '" << c.str << "' nocase " << c.nocase;
  }
}

TEST(GlobMatchTest, BytesAreUnsignedAndNulIsOrdinary) {
  const std::string with_nul("a\0b", 3);
  EXPECT_TRUE(GlobMatch("a?b", with_nul, false));
  EXPECT_TRUE(GlobMatch(std::string("a\0b", 3), with_nul, false));
  EXPECT_TRUE(GlobMatch("[\x80-\xff]", "\xc3", false));
  EXPECT_FALSE(GlobMatch("[\x80-\xff]", "a", false));
}

// A recursive matcher (Redis without its nesting limit) takes exponential time on these; ours is
// O(pattern * string). The bound is loose enough for a slow sanitizer build.
TEST(GlobMatchTest, PathologicalPatternsFinishFast) {
  const auto start = std::chrono::steady_clock::now();
  std::string stars;
  for (int i = 0; i < 30; ++i) stars += "*a";
  const std::string long_a(10000, 'a');
  EXPECT_FALSE(GlobMatch(stars + "b", long_a, false));
  EXPECT_TRUE(GlobMatch(stars, long_a, false));

  std::string many_stars(100000, '*');
  EXPECT_TRUE(GlobMatch(many_stars, long_a, false));
  EXPECT_FALSE(GlobMatch(many_stars + "b", long_a, false));

  std::string nested;
  for (int i = 0; i < 1000; ++i) nested += "*?";
  EXPECT_FALSE(GlobMatch(nested + "b", long_a, true));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

}  // namespace
}  // namespace latch
