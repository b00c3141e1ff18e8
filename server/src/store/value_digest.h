#pragma once
// Redis 8.4's value digests (DIGEST, SET/DELEX IFDEQ/IFDNE): the XXH3-64 hash of a string
// value, written as exactly 16 lowercase hex digits (leading zeros kept). A digest given
// by a client is compared case-insensitively and must be exactly 16 hex digits.
#include <cstdint>
#include <string>
#include <string_view>

namespace latch {

inline constexpr std::string_view kDigestFormatError =
    "ERR must be exactly 16 hexadecimal characters";

std::uint64_t ValueDigest(std::string_view value);
std::string DigestHex(std::string_view value);
bool IsDigestText(std::string_view digest);
// value's digest equals `digest` (which IsDigestText accepted), ignoring case.
bool DigestMatches(std::string_view value, std::string_view digest);

// A value condition of SET and DELEX: which one, and its argument.
enum class ValueCond { kNone, kIfEq, kIfNe, kIfDeq, kIfDne };

// Outcome of a condition against an existing value: met, not met, or a malformed digest
// (the caller replies kDigestFormatError). Redis checks the digest's format only when the
// key exists, so a missing key never reaches this.
enum class CondResult { kMet, kNotMet, kBadDigest };
CondResult CheckValueCond(ValueCond cond, std::string_view arg, std::string_view value);

}  // namespace latch
