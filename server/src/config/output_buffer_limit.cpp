#include "config/output_buffer_limit.h"

#include <cerrno>
#include <cstdlib>
#include <vector>

#include "config/config_values.h"

namespace latch::config {
namespace {

constexpr std::string_view kClassNames[] = {"normal", "slave", "pubsub"};

// Redis splits a CONFIG SET value on single spaces (two spaces make an empty word); the
// config file's words arrive joined by single spaces.
std::vector<std::string_view> SplitOnSpaces(std::string_view value) {
  std::vector<std::string_view> words;
  if (value.empty()) return words;
  std::size_t start = 0;
  for (;;) {
    const std::size_t space = value.find(' ', start);
    words.push_back(value.substr(start, space - start));
    if (space == std::string_view::npos) return words;
    start = space + 1;
  }
}

int ClassIndex(std::string_view name) {
  if (EqualsIgnoreCase(name, "normal")) return 0;
  if (EqualsIgnoreCase(name, "slave") || EqualsIgnoreCase(name, "replica")) return 1;
  if (EqualsIgnoreCase(name, "pubsub")) return 2;
  return -1;  // includes "master", which has no output limit in Redis either
}

// strtoll() as Redis calls it: leading spaces and a sign allowed, nothing after the digits.
std::optional<std::int64_t> ParseSeconds(std::string_view text) {
  const std::string copy(text);
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(copy.c_str(), &end, 10);
  if (*end != '\0' || v < 0) return std::nullopt;
  return static_cast<std::int64_t>(v);
}

}  // namespace

std::string GetClientOutputBufferLimit(const Options& o) {
  std::string out;
  for (std::size_t i = 0; i < o.client_output_buffer_limit.size(); ++i) {
    const Options::OutputBufferLimit& l = o.client_output_buffer_limit[i];
    if (i > 0) out += ' ';
    out += std::string(kClassNames[i]) + " " + std::to_string(l.hard) + " " +
           std::to_string(l.soft) + " " + std::to_string(l.soft_seconds);
  }
  return out;
}

std::optional<std::string> SetClientOutputBufferLimit(Options& o, std::string_view value) {
  const std::vector<std::string_view> words = SplitOnSpaces(value);
  if (words.size() % 4 != 0) {
    return std::string("Wrong number of arguments in buffer limit configuration.");
  }
  auto limits = o.client_output_buffer_limit;
  for (std::size_t i = 0; i < words.size(); i += 4) {
    const int index = ClassIndex(words[i]);
    if (index < 0) {
      return std::string("Invalid client class specified in buffer limit configuration.");
    }
    const std::optional<std::uint64_t> hard = ParseMemory(words[i + 1]);
    const std::optional<std::uint64_t> soft = ParseMemory(words[i + 2]);
    const std::optional<std::int64_t> seconds = ParseSeconds(words[i + 3]);
    if (!hard || !soft || !seconds) {
      return std::string(
          "Error in hard, soft or soft_seconds setting in buffer limit configuration.");
    }
    limits[static_cast<std::size_t>(index)] = {*hard, *soft, *seconds};
  }
  o.client_output_buffer_limit = limits;
  return std::nullopt;
}

}  // namespace latch::config
