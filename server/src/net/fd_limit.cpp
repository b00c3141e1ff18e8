#include "net/fd_limit.h"

#include <spdlog/logger.h>
#include <sys/resource.h>

#include <cerrno>
#include <cstring>

namespace latch {

bool AdjustOpenFilesLimit(Options& options, spdlog::logger& log) {
  const rlim_t wanted = static_cast<rlim_t>(options.maxclients) + kReservedFds;
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == -1) {
    log.warn(
        "Unable to obtain the current NOFILE limit ({}), assuming 1024 and setting "
        "the max clients configuration accordingly.",
        std::strerror(errno));
    options.maxclients = 1024 - kReservedFds;
    return true;
  }
  const rlim_t original = limit.rlim_cur;
  if (original >= wanted) return true;
  // First the whole want (a privileged process may raise the hard limit too), else as far
  // as the hard limit lets an unprivileged one.
  rlimit raised{
      wanted, limit.rlim_max == RLIM_INFINITY || limit.rlim_max > wanted ? limit.rlim_max : wanted};
  int error = 0;
  rlim_t best = original;
  if (setrlimit(RLIMIT_NOFILE, &raised) == 0) {
    best = wanted;
  } else {
    error = errno;
    raised = {limit.rlim_max, limit.rlim_max};
    if (limit.rlim_max > original && setrlimit(RLIMIT_NOFILE, &raised) == 0) {
      best = limit.rlim_max;
    }
  }
  if (best >= wanted) {
    log.info("Increased maximum number of open files to {} (it was originally set to {}).",
             wanted, original);
    return true;
  }
  if (best <= static_cast<rlim_t>(kReservedFds)) {
    log.warn(
        "Your current 'ulimit -n' of {} is not enough for the server to start. Please "
        "increase your open file limit to at least {}. Exiting.",
        original, wanted);
    return false;
  }
  const int requested = options.maxclients;
  options.maxclients = static_cast<int>(best) - kReservedFds;
  log.warn("You requested maxclients of {} requiring at least {} max file descriptors.",
           requested, wanted);
  log.warn("Server can't set maximum open files to {} because of OS error: {}.", wanted,
           std::strerror(error));
  log.warn(
      "Current maximum open files is {}. maxclients has been reduced to {} to "
      "compensate for low ulimit. If you need higher maxclients increase 'ulimit -n'.",
      best, options.maxclients);
  return true;
}

}  // namespace latch
