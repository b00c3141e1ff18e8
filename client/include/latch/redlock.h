#pragma once
// latch::Redlock: one lease over N independent servers (any mix of Redis and latchd), after
// the Redlock algorithm:
// - an attempt asks every server at once for every resource, with the same random owner;
// - it succeeds when at least N/2+1 servers granted all the resources and the validity
//   ttl - elapsed - drift is still positive, where elapsed runs from the start of that attempt
//   and drift = ttl * drift_factor + drift_constant (defaults: 1% + 2 ms);
// - a failed attempt is released on every server (not only the ones that granted it), then
//   retried after a jittered delay, at most retry_count more times;
// - extend follows the same quorum and validity rule.
// The clients are borrowed: they must outlive the Redlock.
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "latch/lock.h"

namespace latch {

struct RedlockOptions {
  int retry_count = 3;       // attempts after the first
  Millis retry_delay{200};   // pause between attempts ...
  Millis retry_jitter{100};  // ... plus or minus up to this much
  double drift_factor = 0.01;
  Millis drift_constant{2};
};

struct RedlockLease {
  std::vector<std::string> keys;
  std::string owner;
  Millis validity{0};      // as computed when granted or last extended
  SteadyTime valid_until;  // start of that attempt + validity + elapsed = start + ttl - drift
  int granted = 0;         // servers that granted every key in that attempt

  bool valid() const { return std::chrono::steady_clock::now() < valid_until; }
};

class Redlock {
 public:
  explicit Redlock(std::vector<Client*> servers, RedlockOptions options = {});

  int quorum() const { return static_cast<int>(locks_.size()) / 2 + 1; }
  // The rules, exposed for tests and callers that measure their own attempts.
  Millis drift(Millis ttl) const;
  // ttl - elapsed - drift, or nullopt when not positive.
  std::optional<Millis> validity(Millis ttl, Millis elapsed) const;

  Awaitable<Result<RedlockLease>> acquire(std::vector<std::string> keys, Millis ttl);
  // Releases on every server; returns how many servers confirmed a release of every key.
  Awaitable<Result<int>> release(const RedlockLease& lease);
  // On success the lease's validity and valid_until are updated. A failed extend leaves the
  // keys as they were (they expire on their own); the lease should be treated as lost.
  Awaitable<Result<RedlockLease>> extend(const RedlockLease& lease, Millis ttl);

  Result<RedlockLease> acquire_sync(std::vector<std::string> keys, Millis ttl);
  Result<int> release_sync(const RedlockLease& lease);
  Result<RedlockLease> extend_sync(const RedlockLease& lease, Millis ttl);

 private:
  // One round on every server in parallel: per server, true when every key was granted.
  Awaitable<std::vector<bool>> OnAll(std::vector<std::string> keys, std::string owner,
                                     std::optional<Millis> ttl, bool extend);

  std::vector<Lock> locks_;
  RedlockOptions options_;
};

}  // namespace latch
