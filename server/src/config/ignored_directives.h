#pragma once
// The directives of redis.conf (Redis 7.0) that do not apply to a lock server: replication,
// persistence tuning, lazyfree, encodings of types latchd does not have, cluster, TLS
// details, ... A stock redis.conf must start latchd, so these are accepted; each value is
// still checked with Redis's rules and reasons (an invalid value stays a fatal error, as in
// Redis), then dropped. main() lists the ones a file used, once, at notice level.
//
// The directives latchd implements live in config_directives.h; a name in both tables is
// found there first.
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace latch::config {

struct IgnoredDirective {
  enum class Kind { kBool, kInteger, kMemory, kEnum, kString, kSpecial };
  std::string_view name;
  Kind kind;
  long long min = 0;  // kInteger, kMemory
  long long max = 0;
  // kEnum: the accepted names, comma-separated, in Redis's order (its reason lists them so).
  std::string_view choices = {};
  // kSpecial: checks all the arguments (argv[0] is the name); returns the reason.
  std::optional<std::string> (*check)(const std::vector<std::string>& args) = nullptr;
  // Takes any number of arguments (the others take exactly one).
  bool multi_argument = false;
};

// Case-insensitive; nullptr when `name` is not one of them.
const IgnoredDirective* FindIgnoredDirective(std::string_view name);
std::span<const IgnoredDirective> IgnoredDirectives();

// The reason `args` (name and values) is invalid for Redis, or nullopt when it is valid.
std::optional<std::string> CheckIgnoredDirective(const IgnoredDirective& directive,
                                                 const std::vector<std::string>& args);

}  // namespace latch::config
