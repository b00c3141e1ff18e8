#pragma once
// Descriptors for maxclients, as redis-server arranges them at start: each client needs one
// and the server keeps kReservedFds for itself (listeners, epoll, logs, metrics).
#include "latch/options.h"

namespace latch {

inline constexpr int kReservedFds = 32;  // Redis's CONFIG_MIN_RESERVED_FDS

// Raises RLIMIT_NOFILE to maxclients + kReservedFds where the process may; when it cannot,
// lowers options.maxclients to what the limit allows and logs it with Redis's lines.
// Returns false (after logging why) when the limit leaves no room for a client at all.
bool AdjustOpenFilesLimit(Options& options);

}  // namespace latch
