#pragma once
// The directives of latchd.conf: one table used by the config file, the command line and
// CONFIG GET/SET, so a directive's name, parsing, range and formatting live in one place.
//
// Values follow redis-server 7: integers are strict (no '+', no leading zeros, no spaces),
// memory values take redis.conf units (1k=1000, 1kb=1024, m/mb, g/gb, any case) and are shown by
// CONFIG GET as plain byte counts, booleans are yes/no, enums are case-insensitive and shown in
// lower case. Reasons are Redis's texts (see config_values.h).
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "latch/options.h"

namespace latch::config {

// One address of the bind directive: "-::1" is {"::1", optional}.
struct BindAddress {
  std::string address;
  bool optional = false;
};
inline constexpr std::size_t kMaxBindAddresses = 16;  // Redis's CONFIG_BINDADDR_MAX
// Splits a bind value on spaces; empty words are dropped.
std::vector<BindAddress> SplitBindAddresses(std::string_view value);
// The address to listen on: Redis's wildcards "*" and "::*" are 0.0.0.0 and ::.
std::string ListenAddress(const BindAddress& a);

struct ConfigDirective {
  std::string_view name;  // lower case, as in redis.conf
  // The value as CONFIG GET shows it.
  std::string (*get)(const Options&);
  // Parses and stores `value`; returns the reason on failure and then leaves `options` as it was.
  std::optional<std::string> (*set)(Options&, std::string_view value);
  // False: only the config file and the command line may set it; CONFIG SET refuses with
  // "can't set immutable config".
  bool runtime_settable;
  // True: takes one or more arguments, joined with single spaces (bind 127.0.0.1 -::1).
  bool multi_argument = false;
  // True: CONFIG SET refuses it ("can't set protected config") unless enable-protected-configs
  // allows the client (Redis 7.0's PROTECTED_CONFIG: dir, and dbfilename, which latchd ignores).
  bool protected_config = false;
};

// Every directive, in the order of conf/latchd.conf. The table is a constant.
std::span<const ConfigDirective> ConfigDirectives();

// Case-insensitive lookup; nullptr when `name` is no directive.
const ConfigDirective* FindConfigDirective(std::string_view name);

}  // namespace latch::config
