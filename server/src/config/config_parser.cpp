#include "config/config_parser.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "config/config_directives.h"
#include "config/config_values.h"
#include "config/ignored_directives.h"
#include "latch/protocol/split_args.h"

#ifndef LATCH_VERSION
#define LATCH_VERSION "unknown"
#endif

namespace latch::config {
namespace {

constexpr std::string_view kBadDirective = "Bad directive or wrong number of arguments";
constexpr std::string_view kWrongArgumentCount = "wrong number of arguments";
constexpr std::string_view kUnbalancedQuotes = "Unbalanced quotes in configuration line";
// include inside include: bounded, so a file that includes itself fails instead of recursing.
constexpr int kMaxIncludeDepth = 16;

// Redis trims a config line of " \t\r\n" only (\v and \f stay, as part of an argument).
std::string_view Trim(std::string_view s) {
  constexpr std::string_view kBlank = " \t\r\n";
  const auto first = s.find_first_not_of(kBlank);
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(kBlank) - first + 1);
}

[[noreturn]] void ThrowLineError(std::string_view source, std::string_view where, int line,
                                 std::string_view text, std::string_view reason) {
  std::string message = "*** FATAL CONFIG FILE ERROR (latchd " LATCH_VERSION ") ***\n";
  message += "Reading ";
  message += source;
  message += ", at ";
  message += where;
  message += ' ';
  message += std::to_string(line);
  message += "\n>>> '";
  message += text;
  message += "'\n";
  message += reason;
  message += '\n';
  throw ConfigError(message, std::string(source), line, std::string(text), std::string(reason));
}

// Applies one directive; returns the reason it was refused. A directive of Redis's that
// latchd does not implement is checked and its name added to `ignored` (once).
std::optional<std::string> ApplyDirective(const std::vector<std::string>& args, Options& options,
                                          std::vector<std::string>* ignored) {
  const ConfigDirective* directive = FindConfigDirective(args[0]);
  if (directive == nullptr) {
    const IgnoredDirective* other = FindIgnoredDirective(args[0]);
    if (other == nullptr) return std::string(kBadDirective);
    if (std::optional<std::string> reason = CheckIgnoredDirective(*other, args)) return reason;
    if (ignored != nullptr &&
        std::find(ignored->begin(), ignored->end(), other->name) == ignored->end()) {
      ignored->emplace_back(other->name);
    }
    return std::nullopt;
  }
  if (directive->multi_argument && args.size() > 2) {
    std::string joined = args[1];
    for (std::size_t i = 2; i < args.size(); ++i) joined += " " + args[i];
    return directive->set(options, joined);
  }
  if (args.size() != 2) return std::string(kWrongArgumentCount);
  return directive->set(options, args[1]);
}

// Redis shows command-line values quoted; enough for a message (not a full escaper).
std::string QuoteForMessage(std::string_view value) {
  std::string out = "\"";
  for (char c : value) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  out += '"';
  return out;
}

std::string ReadConfigFile(const std::string& path) {
  if (path == "-") {
    return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int error = errno;
    throw ConfigError("Fatal error, can't open config file '" + path +
                      "': " + std::strerror(error));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) {
    throw ConfigError("Fatal error, can't read config file '" + path + "'");
  }
  return std::move(text).str();
}

bool IsOption(const char* arg) { return arg[0] == '-' && arg[1] == '-'; }

}  // namespace

std::optional<std::vector<std::string>> SplitConfigLine(std::string_view line) {
  std::vector<std::string> args;
  if (!protocol::SplitArgs(line, &args)) return std::nullopt;
  return args;
}

void ApplyConfigText(std::string_view text, std::string_view source, Options& options,
                     std::vector<std::string>* ignored, int depth) {
  int line_number = 0;
  while (!text.empty()) {
    ++line_number;
    const std::size_t end = text.find('\n');
    const std::string_view raw = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    const std::string_view line = Trim(raw);
    if (line.empty() || line.front() == '#') continue;
    const std::optional<std::vector<std::string>> args = SplitConfigLine(line);
    if (!args) ThrowLineError(source, "line", line_number, line, kUnbalancedQuotes);
    if (args->empty()) continue;
    if (EqualsIgnoreCase((*args)[0], "include") && args->size() == 2) {
      // Redis reads the included file in place, with its own line numbers in errors.
      if (depth >= kMaxIncludeDepth) {
        ThrowLineError(source, "line", line_number, line, "too many nested include directives");
      }
      const std::string& path = (*args)[1];
      ApplyConfigText(ReadConfigFile(path), "the configuration file '" + path + "'", options,
                      ignored, depth + 1);
      continue;
    }
    if (std::optional<std::string> reason = ApplyDirective(*args, options, ignored)) {
      ThrowLineError(source, "line", line_number, line, *reason);
    }
  }
}

CommandLineAction ClassifyCommandLine(int argc, const char* const* argv) {
  if (argc < 2) return CommandLineAction::kRun;
  const std::string_view first = argv[1];
  if (first == "-v" || first == "--version") return CommandLineAction::kVersion;
  if (first == "-h" || first == "--help") return CommandLineAction::kHelp;
  return CommandLineAction::kRun;
}

LoadedConfig LoadConfig(int argc, const char* const* argv) {
  LoadedConfig loaded;
  int j = 1;
  if (argc >= 2 && (argv[1][0] != '-' || std::string_view(argv[1]) == "-")) {
    const std::string path = argv[1];
    ApplyConfigText(ReadConfigFile(path), "the configuration file '" + path + "'",
                    loaded.options, &loaded.ignored);
    if (path != "-") {
      std::error_code ec;
      const auto absolute = std::filesystem::absolute(path, ec);
      loaded.options.config_file = ec ? path : absolute.string();
    }
    j = 2;
  }
  constexpr std::string_view kCommandLine = "the command line";
  while (j < argc) {
    const int start = j;
    if (!IsOption(argv[j])) {
      // A value with no --directive before it.
      ThrowLineError(kCommandLine, "argument", start, argv[j], kBadDirective);
    }
    std::vector<std::string> args{argv[j] + 2};
    std::string text = argv[j] + 2;
    for (++j; j < argc && !IsOption(argv[j]); ++j) {
      args.emplace_back(argv[j]);
      text += ' ';
      text += QuoteForMessage(argv[j]);
    }
    if (std::optional<std::string> reason = ApplyDirective(args, loaded.options, &loaded.ignored)) {
      ThrowLineError(kCommandLine, "argument", start, text, *reason);
    }
  }
  return loaded;
}

Options LoadOptions(int argc, const char* const* argv) { return LoadConfig(argc, argv).options; }

std::string VersionText() {
  return "latchd v=" LATCH_VERSION " bits=" + std::to_string(sizeof(void*) * 8);
}

std::string UsageText(std::string_view program) {
  std::string p(program);
  return "Usage: " + p +
         " [/path/to/latchd.conf] [options]\n"
         "       " +
         p +
         " - (read config from stdin)\n"
         "       " +
         p +
         " -v or --version\n"
         "       " +
         p +
         " -h or --help\n\n"
         "Examples:\n"
         "       " +
         p +
         " (run the server with default config)\n"
         "       " +
         p +
         " /etc/latch/latchd.conf\n"
         "       " +
         p +
         " --port 7777\n"
         "       " +
         p +
         " /etc/latch/latchd.conf --loglevel verbose --requirepass \"a b\"\n\n"
         "Directives: see conf/latchd.conf and latchd(1). A redis.conf works as it is: the\n"
         "directives that do not apply to a lock server are listed at start-up and ignored.\n";
}

}  // namespace latch::config
