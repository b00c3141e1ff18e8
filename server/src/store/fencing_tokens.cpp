#include "store/fencing_tokens.h"

#include <algorithm>

namespace latch::store {

std::uint64_t FencingTokens::WallFloor(std::int64_t wall_us) {
  if (wall_us <= 0) return 0;
  const auto us = static_cast<std::uint64_t>(wall_us);
  return us >= kMaxWallToken / 1000 ? kMaxWallToken : us * 1000;
}

std::uint64_t FencingTokens::Advance(std::int64_t wall_us) {
  const std::uint64_t term_floor = term_floor_.load(std::memory_order_acquire);
  const std::uint64_t floor = term_floor == kWallClockFloor ? WallFloor(wall_us) : term_floor;
  std::uint64_t last = last_.load(std::memory_order_relaxed);
  std::uint64_t next;
  do {
    next = std::max(last + 1, floor);
  } while (!last_.compare_exchange_weak(last, next, std::memory_order_relaxed));
  return next;
}

void FencingTokens::UseTermFloor(std::uint64_t term) {
  // 2^40 grants per term; terms past 2^21 (never reached: one per election) share the cap,
  // where last + 1 keeps the order. The cap stays below kMaxValidToken.
  constexpr std::uint64_t kMaxTerm = std::uint64_t{1} << 21;
  const std::uint64_t floor = std::min(term, kMaxTerm) << 40;
  std::uint64_t seen = term_floor_.load(std::memory_order_relaxed);
  while ((seen == kWallClockFloor || seen < floor) &&
         !term_floor_.compare_exchange_weak(seen, floor, std::memory_order_release)) {
  }
}

void FencingTokens::AtLeast(std::uint64_t token) {
  std::uint64_t last = last_.load(std::memory_order_relaxed);
  while (last < token && !last_.compare_exchange_weak(last, token, std::memory_order_relaxed)) {
  }
}

bool FencingTokens::UseReservations(TokenReservations* r, std::int64_t wall_us) {
  std::lock_guard lock(reserve_mu_);
  reservations_ = r;
  if (r == nullptr) {
    reserved_.store(UINT64_MAX, std::memory_order_release);
    return true;
  }
  // The counter (raised to the floor just read) is durable already: a grant that comes while
  // the first reservation is written waits for it in ReserveFor.
  reserved_.store(last(), std::memory_order_release);
  const std::uint64_t target = std::max(last(), WallFloor(wall_us)) + kReserveAheadNs;
  const bool ok = r->Reserve(target);
  reserved_.store(target, std::memory_order_release);
  return ok;
}

bool FencingTokens::Refill(std::int64_t wall_us) {
  const std::uint64_t base = std::max(last(), WallFloor(wall_us));
  if (reserved_.load(std::memory_order_acquire) >= base + kReserveAheadNs / 2) return false;
  std::lock_guard lock(reserve_mu_);
  if (reservations_ == nullptr ||
      reserved_.load(std::memory_order_relaxed) >= base + kReserveAheadNs / 2) {
    return false;
  }
  ReserveLocked(base);
  return true;
}

// A token above the limit is handed out only once a limit above it is durable. Threads that
// arrive meanwhile wait on the mutex and find the new limit covering them.
void FencingTokens::ReserveFor(std::uint64_t token) {
  std::lock_guard lock(reserve_mu_);
  if (reservations_ == nullptr || token <= reserved_.load(std::memory_order_relaxed)) return;
  ReserveLocked(token);
}

void FencingTokens::ReserveLocked(std::uint64_t base) {
  const std::uint64_t target = base + kReserveAheadNs;
  // On failure the limit moves on all the same: the reservation retries in the background
  // (journal/token_floor.h) and says so in INFO, rather than every grant retrying a write
  // that just failed, under its shard lock.
  reservations_->Reserve(target);
  reserved_.store(target, std::memory_order_release);
}

}  // namespace latch::store
