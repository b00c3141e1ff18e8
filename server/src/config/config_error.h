#pragma once
// The one exception of the config layer: start-up stops on it (exceptions are fine at start-up,
// never on the data path).
#include <stdexcept>
#include <string>

namespace latch {

// what() is the full text to print on stderr before exiting with status 1. For a bad line it is
// a block in the style of redis-server's:
//
//   *** FATAL CONFIG FILE ERROR (latchd 0.1.0) ***
//   Reading the configuration file 'conf/latchd.conf', at line 4
//   >>> 'port 70000'
//   argument must be between 0 and 65535 inclusive
//
// For a --directive on the command line the second line reads
// "Reading the command line, at argument 3" (the index in argv of the `--directive`).
class ConfigError : public std::runtime_error {
 public:
  // A failure that is not about one line (e.g. the file cannot be opened).
  explicit ConfigError(const std::string& message) : std::runtime_error(message), line_(0) {}
  // A bad line: `source` names where it was read ("the configuration file 'x.conf'" or
  // "the command line"), `line` is 1-based, `text` is the line as read (trimmed).
  ConfigError(const std::string& message, std::string source, int line, std::string text,
              std::string reason)
      : std::runtime_error(message),
        source_(std::move(source)),
        line_(line),
        text_(std::move(text)),
        reason_(std::move(reason)) {}

  const std::string& source() const { return source_; }
  int line() const { return line_; }  // 0 when not about a line
  const std::string& text() const { return text_; }
  const std::string& reason() const { return reason_; }

 private:
  std::string source_;
  int line_;
  std::string text_;
  std::string reason_;
};

}  // namespace latch
