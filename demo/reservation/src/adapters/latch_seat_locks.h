#pragma once
// The SeatLocks port on latch::Lock: the same code against Redis (SET NX PX + compare-and-
// delete; no fencing tokens) and latchd (LOCK.ACQUIRE/RELEASE; fencing tokens).
#include "app/ports.h"
#include "latch/lock.h"

namespace latch::demo {

class LatchSeatLocks : public SeatLocks {
 public:
  // `ttl`: how long a lock lives if its holder dies before releasing it; keep it short (the
  // lock only has to cover one request). `wait`: how long to queue for a held lock (0: fail
  // at once with kLockBusy, as the Go service's SETNX does). `client` must outlive this.
  LatchSeatLocks(Client& client, Millis ttl, Millis wait);

  Outcome<std::unique_ptr<HeldLocks>> AcquireAll(const std::vector<std::string>& keys) override;
  Outcome<Unit> Ping() override;

 private:
  Client& client_;
  Lock lock_;
  Millis ttl_;
  Millis wait_;
};

}  // namespace latch::demo
