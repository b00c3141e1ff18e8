#pragma once
// Parsing of directive values, with redis-server 7's rules and its reason texts (the last line of
// a FATAL CONFIG FILE ERROR block and the tail of a CONFIG SET error). Each function returns the
// parsed value or the reason, never throws.
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace latch::config {

// Either a value or the reason it was refused.
template <typename T>
using Parsed = std::variant<T, std::string>;

inline constexpr std::string_view kNotAnInteger = "argument couldn't be parsed into an integer";
inline constexpr std::string_view kNotAMemoryValue = "argument must be a memory value";
inline constexpr std::string_view kNotYesNo = "argument must be 'yes' or 'no'";

// Redis's string2ll(): an optional '-', then digits with no leading zero (except "0" itself), no
// '+', no spaces, no overflow. "-0", "05", "+5", " 5" and "1.5" are refused.
std::optional<std::int64_t> ParseStrictInteger(std::string_view text);

// Redis's memtoull(): digits then an optional unit, case-insensitive: b=1, k=1000, kb=1024,
// m=1000^2, mb=1024^2, g=1000^3, gb=1024^3. Like Redis, empty digits read as 0 ("" and "mb" are
// 0), leading zeros are allowed, and a sign, a fraction, spaces or overflow are refused.
std::optional<std::uint64_t> ParseMemory(std::string_view text);

// An integer in [min, max]: kNotAnInteger or "argument must be between MIN and MAX inclusive".
Parsed<std::int64_t> ParseIntegerInRange(std::string_view text, std::int64_t min, std::int64_t max);
// A memory value in [min, max]: kNotAMemoryValue (also for values past INT64_MAX, which Redis
// sees as negative) or the range reason.
Parsed<std::int64_t> ParseMemoryInRange(std::string_view text, std::int64_t min, std::int64_t max);
// "yes" or "no", case-insensitive.
Parsed<bool> ParseYesNo(std::string_view text);
// One of `names` (lower case), case-insensitive; returns its index, or
// "argument(s) must be one of the following: a, b, c".
Parsed<int> ParseEnum(std::string_view text, std::initializer_list<std::string_view> names);

std::string RangeReason(std::int64_t min, std::int64_t max);
bool EqualsIgnoreCase(std::string_view a, std::string_view b);
std::string ToLower(std::string_view text);

}  // namespace latch::config
