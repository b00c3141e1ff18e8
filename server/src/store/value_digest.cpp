#include "store/value_digest.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace latch {

std::uint64_t ValueDigest(std::string_view value) {
  return XXH3_64bits(value.data(), value.size());
}

std::string DigestHex(std::string_view value) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::uint64_t h = ValueDigest(value);
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, h >>= 4) s[static_cast<std::size_t>(i)] = kHex[h & 15];
  return s;
}

bool IsDigestText(std::string_view digest) {
  if (digest.size() != 16) return false;
  for (char c : digest) {
    bool hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    if (!hex) return false;
  }
  return true;
}

bool DigestMatches(std::string_view value, std::string_view digest) {
  std::string mine = DigestHex(value);
  for (std::size_t i = 0; i < 16; ++i) {
    char c = digest[i];
    if (c >= 'A' && c <= 'F') c = static_cast<char>(c - 'A' + 'a');
    if (c != mine[i]) return false;
  }
  return true;
}

CondResult CheckValueCond(ValueCond cond, std::string_view arg, std::string_view value) {
  auto met = [](bool b) { return b ? CondResult::kMet : CondResult::kNotMet; };
  switch (cond) {
    case ValueCond::kNone:
      return CondResult::kMet;
    case ValueCond::kIfEq:
      return met(value == arg);
    case ValueCond::kIfNe:
      return met(value != arg);
    case ValueCond::kIfDeq:
    case ValueCond::kIfDne:
      if (!IsDigestText(arg)) return CondResult::kBadDigest;
      return met(DigestMatches(value, arg) == (cond == ValueCond::kIfDeq));
  }
  return CondResult::kNotMet;
}

}  // namespace latch
