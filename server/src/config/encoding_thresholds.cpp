#include "config/encoding_thresholds.h"

#include "config/config_values.h"

namespace latch::config {
namespace {

struct Threshold {
  std::string_view name;   // Redis 7.0's name
  std::string_view alias;  // its pre-7.0 ziplist name, or empty
  std::string_view value;
};

// hash: HashValue::kSmallEntries / kSmallBytes; zset: object_encoding.cpp's listpack bound
// (and Redis's 64-byte member bound); the rest are Redis 7.0's defaults.
constexpr Threshold kThresholds[] = {
    {"hash-max-listpack-entries", "hash-max-ziplist-entries", "128"},
    {"hash-max-listpack-value", "hash-max-ziplist-value", "64"},
    {"zset-max-listpack-entries", "zset-max-ziplist-entries", "128"},
    {"zset-max-listpack-value", "zset-max-ziplist-value", "64"},
    {"list-max-listpack-size", "list-max-ziplist-size", "-2"},
    {"set-max-intset-entries", "", "512"},
    {"stream-node-max-entries", "", "100"},
};

}  // namespace

bool IsEncodingThreshold(std::string_view name) {
  return name.find("-max-") != std::string_view::npos &&
         (name.ends_with("-entries") || name.ends_with("-value") || name.ends_with("-size"));
}

std::optional<std::string> EncodingThresholdValue(std::string_view name) {
  for (const Threshold& t : kThresholds) {
    if (EqualsIgnoreCase(name, t.name) || (!t.alias.empty() && EqualsIgnoreCase(name, t.alias))) {
      return std::string(t.value);
    }
  }
  return std::nullopt;
}

}  // namespace latch::config
