#pragma once
// latchd's start-up configuration, read the way redis-server reads its own:
//
//   latchd [config-file] [--directive value ...]
//
// The file has one `directive value` per line, '#' comment lines, blank lines, and values quoted
// as in redis.conf ("a b", 'a b', "\x41\n" escapes in double quotes). Directive names are
// case-insensitive; a later line wins. `--directive value` pairs on the command line are applied
// after the file, so they override it (Redis appends them to the file's text). A config file
// of "-" is read from standard input.
//
// Any unknown directive, wrong number of arguments, unbalanced quote or bad value throws a
// ConfigError naming where (file and line, or command-line argument), the line and the reason.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config_error.h"
#include "latch/options.h"

namespace latch::config {

// A config line's arguments, split by protocol::SplitArgs (Redis's sdssplitargs, the same
// splitter as inline requests). Returns nullopt on an unbalanced quote.
std::optional<std::vector<std::string>> SplitConfigLine(std::string_view line);

// Applies config-file text onto `options`. `source` names it in errors, e.g.
// "the configuration file 'conf/latchd.conf'". `include path` lines are read in place (nested
// at most 16 deep). The names of Redis directives that latchd accepts but ignores
// (ignored_directives.h) are appended to `ignored` once each, when it is not null.
void ApplyConfigText(std::string_view text, std::string_view source, Options& options,
                     std::vector<std::string>* ignored = nullptr, int depth = 0);

// What argv asks for: redis-server's -v/--version and -h/--help, only as the first argument.
enum class CommandLineAction { kRun, kVersion, kHelp };
CommandLineAction ClassifyCommandLine(int argc, const char* const* argv);

// Defaults, then the config file (if argv[1] does not start with '-', or is "-"), then the
// --directive overrides. Throws ConfigError.
struct LoadedConfig {
  Options options;
  std::vector<std::string> ignored;  // Redis directives accepted without effect, in file order
};
LoadedConfig LoadConfig(int argc, const char* const* argv);
Options LoadOptions(int argc, const char* const* argv);  // LoadConfig(...).options

// "latchd v=0.1.0 bits=64" (the LATCH_VERSION the library was built with).
std::string VersionText();
std::string UsageText(std::string_view program);

}  // namespace latch::config

namespace latch {
using config::LoadOptions;
}  // namespace latch
