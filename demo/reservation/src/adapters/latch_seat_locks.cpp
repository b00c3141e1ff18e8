#include "adapters/latch_seat_locks.h"

#include <utility>

#include "adapters/round_trips.h"

namespace latch::demo {
namespace {

// Releases with the owner token only (compare-and-delete / LOCK.RELEASE): a lease that
// expired and was taken by someone else is never deleted. Release failures are ignored: the
// TTL frees the key anyway.
class LatchHeldLocks : public HeldLocks {
 public:
  LatchHeldLocks(Lock& lock, std::vector<Lease> leases) : lock_(lock), leases_(std::move(leases)) {
    for (const Lease& lease : leases_) tokens_.push_back(lease.fencing_token);
  }
  ~LatchHeldLocks() override {
    for (auto it = leases_.rbegin(); it != leases_.rend(); ++it) {
      ++ThisThreadRoundTrips().lock_server;
      lock_.release_sync(*it);
    }
  }
  const std::vector<std::optional<std::int64_t>>& fencing_tokens() const override {
    return tokens_;
  }

 private:
  Lock& lock_;
  std::vector<Lease> leases_;
  std::vector<std::optional<std::int64_t>> tokens_;
};

}  // namespace

LatchSeatLocks::LatchSeatLocks(Client& client, Millis ttl, Millis wait)
    : client_(client), lock_(client), ttl_(ttl), wait_(wait) {}

Outcome<std::unique_ptr<HeldLocks>> LatchSeatLocks::AcquireAll(
    const std::vector<std::string>& keys) {
  std::vector<Lease> leases;
  leases.reserve(keys.size());
  AcquireOptions options;
  options.wait = wait_;
  for (const std::string& key : keys) {
    ++ThisThreadRoundTrips().lock_server;
    auto lease = lock_.acquire_sync(key, ttl_, options);
    if (!lease.ok()) {
      for (auto it = leases.rbegin(); it != leases.rend(); ++it) {
        ++ThisThreadRoundTrips().lock_server;
        lock_.release_sync(*it);
      }
      if (lease.error().is(Errc::kNotAcquired)) {
        return AppError{ErrorCode::kLockBusy, "seat is being booked by another request (" + key +
                                                  " is locked); try again"};
      }
      return AppError{ErrorCode::kUnavailable,
                      "lock server unavailable: " + lease.error().ToString()};
    }
    leases.push_back(std::move(lease.value()));
  }
  return std::unique_ptr<HeldLocks>(std::make_unique<LatchHeldLocks>(lock_, std::move(leases)));
}

Outcome<Unit> LatchSeatLocks::Ping() {
  ++ThisThreadRoundTrips().lock_server;
  auto reply = client_.command_sync("PING");
  if (!reply.ok()) {
    return AppError{ErrorCode::kUnavailable,
                    "lock server unavailable: " + reply.error().ToString()};
  }
  if (reply->is_error()) {
    return AppError{ErrorCode::kUnavailable, "lock server answered PING with " + reply->str};
  }
  return Unit{};
}

}  // namespace latch::demo
