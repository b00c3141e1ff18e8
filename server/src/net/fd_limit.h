#pragma once
// Descriptors for maxclients, as redis-server arranges them at start: each client needs one
// and the server keeps kReservedFds for itself (listeners, epoll, logs, metrics).
#include "latch/options.h"

namespace spdlog {
class logger;
}  // namespace spdlog

namespace latch {

inline constexpr int kReservedFds = 32;  // Redis's CONFIG_MIN_RESERVED_FDS

// Raises RLIMIT_NOFILE to maxclients + kReservedFds where the process may; when it cannot,
// lowers options.maxclients to what the limit allows and logs it with Redis's lines.
// Returns false (after logging why) when the limit leaves no room for a client at all.
// Logs to `log`, the server's own logger (never spdlog's default one).
bool AdjustOpenFilesLimit(Options& options, spdlog::logger& log);

}  // namespace latch
