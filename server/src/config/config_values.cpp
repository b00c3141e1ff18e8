#include "config/config_values.h"

#include "latch/protocol/int_parse.h"

#include <limits>

namespace latch::config {
namespace {

char LowerAscii(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (LowerAscii(a[i]) != LowerAscii(b[i])) return false;
  }
  return true;
}

std::string ToLower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = LowerAscii(c);
  return out;
}

std::optional<std::int64_t> ParseStrictInteger(std::string_view text) {
  std::int64_t v;
  if (!ParseInt64(text, &v)) return std::nullopt;
  return v;
}

std::optional<std::uint64_t> ParseMemory(std::string_view text) {
  std::size_t digits = 0;
  while (digits < text.size() && IsDigit(text[digits])) ++digits;
  const std::string_view unit = text.substr(digits);
  std::uint64_t multiplier = 0;
  if (unit.empty() || EqualsIgnoreCase(unit, "b")) {
    multiplier = 1;
  } else if (EqualsIgnoreCase(unit, "k")) {
    multiplier = 1000;
  } else if (EqualsIgnoreCase(unit, "kb")) {
    multiplier = 1024;
  } else if (EqualsIgnoreCase(unit, "m")) {
    multiplier = 1000ULL * 1000;
  } else if (EqualsIgnoreCase(unit, "mb")) {
    multiplier = 1024ULL * 1024;
  } else if (EqualsIgnoreCase(unit, "g")) {
    multiplier = 1000ULL * 1000 * 1000;
  } else if (EqualsIgnoreCase(unit, "gb")) {
    multiplier = 1024ULL * 1024 * 1024;
  } else {
    return std::nullopt;
  }
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < digits; ++i) {
    const std::uint64_t digit = static_cast<std::uint64_t>(text[i] - '0');
    if (value > (kMax - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
  }
  if (value > kMax / multiplier) return std::nullopt;
  return value * multiplier;
}

std::string RangeReason(std::int64_t min, std::int64_t max) {
  return "argument must be between " + std::to_string(min) + " and " + std::to_string(max) +
         " inclusive";
}

Parsed<std::int64_t> ParseIntegerInRange(std::string_view text, std::int64_t min,
                                         std::int64_t max) {
  const std::optional<std::int64_t> value = ParseStrictInteger(text);
  if (!value) return std::string(kNotAnInteger);
  if (*value < min || *value > max) return RangeReason(min, max);
  return *value;
}

Parsed<std::int64_t> ParseMemoryInRange(std::string_view text, std::int64_t min, std::int64_t max) {
  const std::optional<std::uint64_t> value = ParseMemory(text);
  if (!value || *value > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    return std::string(kNotAMemoryValue);
  }
  const auto signed_value = static_cast<std::int64_t>(*value);
  if (signed_value < min || signed_value > max) return RangeReason(min, max);
  return signed_value;
}

Parsed<bool> ParseYesNo(std::string_view text) {
  if (EqualsIgnoreCase(text, "yes")) return true;
  if (EqualsIgnoreCase(text, "no")) return false;
  return std::string(kNotYesNo);
}

Parsed<int> ParseEnum(std::string_view text, std::initializer_list<std::string_view> names) {
  std::string reason = "argument(s) must be one of the following: ";
  int index = 0;
  for (std::string_view name : names) {
    if (EqualsIgnoreCase(text, name)) return index;
    if (index > 0) reason += ", ";
    reason += name;
    ++index;
  }
  return reason;
}

}  // namespace latch::config
