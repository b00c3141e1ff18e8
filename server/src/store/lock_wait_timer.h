#pragma once
// How long LOCK.ACQUIRE ... WAIT waited, for /metrics. Owned by the store so that the lock
// table includes no metrics code: LockTimings (metrics/lock_timings.h) is one, and
// ServerState hands it to the lock tables (LockStats::wait_timer).
#include <cstdint>

namespace latch::store {

class LockWaitTimer {
 public:
  // A waiter left its queue `nanos` after it parked: handed the key, given up on, or
  // (`timed_out`) past its deadline. Called under the key's shard lock.
  virtual void WaitEnded(std::int64_t nanos, bool timed_out) = 0;

 protected:
  ~LockWaitTimer() = default;
};

}  // namespace latch::store
