#pragma once
// spdlog set-up for latchd: where lines go (logfile or standard output), the loglevel mapping,
// and redis-server's line format:
//
//   12345:M 29 Nov 2026 21:52:58.806 * Ready to accept connections tcp
//
// (pid, role, local time with milliseconds, a level mark: '.' debug, '-' verbose, '*' notice,
// '#' warning and above.)
#include <spdlog/common.h>

#include <memory>
#include <string_view>

#include "latch/options.h"

namespace spdlog {
class logger;
}  // namespace spdlog

namespace latch::config {

// debug -> trace, verbose -> debug, notice -> info, warning -> warn, nothing -> off. An unknown
// name (never produced by the config parser) maps to info.
spdlog::level::level_enum SpdlogLevel(std::string_view loglevel);

// A logger named "latchd" writing to options.logfile (appended, followed across logrotate: see
// log_file_sink.h) or stdout, and also to syslog with syslog-enabled yes, at options.loglevel,
// flushed on every line as Redis does. Throws std::runtime_error ("Can't open the log file: No
// such file or directory", Redis's text) when the file cannot be opened.
// main() installs it as spdlog's default logger (latchd's own lines) and names it in
// Options::logger_name, so the server logs through the same one (ServerState::log); CONFIG
// SET loglevel calls ServerState::log->set_level(SpdlogLevel(new_level)).
std::shared_ptr<spdlog::logger> MakeLogger(const Options& options);

// The logger an embedded server writes to (Options::logger_name): the one registered under
// that name, else a new unregistered stderr logger in Redis's format; at options.loglevel.
std::shared_ptr<spdlog::logger> ServerLogger(const Options& options);

// Makes the logger's log file sink (if any) reopen its path before the next line (SIGHUP).
void ReopenLogFile(spdlog::logger& logger);

// "local0" -> LOG_LOCAL0, "user" -> LOG_USER (the names syslog-facility accepts).
int SyslogFacility(std::string_view name);

}  // namespace latch::config
