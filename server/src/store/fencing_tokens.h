#pragma once
// Fencing tokens: one server-wide counter, token = max(last + 1, wall-clock ns since the
// epoch); on a cluster node max(last + 1, term << 40) instead (UseTermFloor; docs/CLUSTER.md,
// "Fencing tokens"), so that no wall clock enters a token. Strictly increasing for every grant of
// every key, with no per-key memory once a key is gone.
//
// Across a restart the counter must go on above every token handed out before, also when the
// wall clock went back meanwhile. Two things carry it over (docs/LOCKS.md says which mode
// has which): the journal's records (the loader calls AtLeast), and a durable reservation
// (journal/token_floor.h). With a reservation registered, no token above the reserved limit
// leaves Next() before a higher limit is durable, and a restarted server starts above the
// stored limit. The limit runs kReserveAheadNs ahead of the tokens, and a background thread
// moves it on (Refill) before it is reached, so Next() itself waits for the disk only when the
// wall clock jumps forward or that thread is late: about one small write every few seconds,
// never one per grant.
//
// Range: tokens are RESP integers (signed 64-bit). The wall-clock part is capped at
// kMaxWallToken (2^62 ns: the year 2116), and a restored token above kMaxValidToken cannot
// have been granted by latchd: the loader refuses it, which leaves 2^61 grants of headroom
// below INT64_MAX, so a token never turns negative or wraps.
#include <atomic>
#include <cstdint>
#include <mutex>

namespace latch::store {

// Where reservations are made durable (journal/token_floor.h registers one: the store layer
// owns the interface, the journal implements it).
class TokenReservations {
 public:
  virtual ~TokenReservations() = default;
  // Makes `limit` durable: a server restarted later starts its tokens above it. Returns false
  // when it could not (the implementation logs it and retries on its own).
  virtual bool Reserve(std::uint64_t limit) = 0;
};

class FencingTokens {
 public:
  static constexpr std::uint64_t kMaxWallToken = std::uint64_t{1} << 62;
  static constexpr std::uint64_t kMaxValidToken = std::uint64_t{3} << 61;
  static constexpr std::uint64_t kReserveAheadNs = 10'000'000'000;  // 10 s of wall clock

  // A token a journal record or a stored floor may carry.
  static bool Valid(std::uint64_t token) { return token <= kMaxValidToken; }

  // The next token: > every token returned before by this object, and >= wall_us * 1000
  // (capped at kMaxWallToken). With reservations, <= a durable limit.
  std::uint64_t Next(std::int64_t wall_us) {
    const std::uint64_t next = Advance(wall_us);
    if (next > reserved_.load(std::memory_order_acquire)) [[unlikely]]
      ReserveFor(next);
    return next;
  }
  std::uint64_t last() const { return last_.load(std::memory_order_relaxed); }
  // A cluster node: from now on the floor is `term << 40` (capped at 2^61) in place of the
  // wall clock. Only raised: a lower term leaves the floor as it is. Called before the node
  // serves as the leader of `term`.
  void UseTermFloor(std::uint64_t term);
  // Raises the counter to at least `token` (the journal's loader, the stored floor: tokens
  // granted before a restart stay below every later grant, whatever the wall clock did).
  void AtLeast(std::uint64_t token);

  // From now on tokens stay at or below a limit made durable through `r` (which must outlive
  // this object or be unregistered with nullptr). Reserves ahead of the current counter at
  // once, on this thread: returns false when that failed.
  bool UseReservations(TokenReservations* r, std::int64_t wall_us);
  // Moves the durable limit on when less than half of kReserveAheadNs is left above the
  // counter (or the wall clock): the reservation thread calls it a few times a second.
  // Returns true when it reserved.
  bool Refill(std::int64_t wall_us);
  // The limit handed out tokens stay under (UINT64_MAX without reservations).
  std::uint64_t reserved() const { return reserved_.load(std::memory_order_relaxed); }

 private:
  static std::uint64_t WallFloor(std::int64_t wall_us);
  std::uint64_t Advance(std::int64_t wall_us);
  // Slow path of Next(): waits until a limit >= token is durable (or its write failed).
  void ReserveFor(std::uint64_t token);
  // Under reserve_mu_: reserves kReserveAheadNs above `base`.
  void ReserveLocked(std::uint64_t base);

  // UINT64_MAX: the wall clock's floor (a single node); else the term's (UseTermFloor).
  static constexpr std::uint64_t kWallClockFloor = UINT64_MAX;
  std::atomic<std::uint64_t> last_{0};
  std::atomic<std::uint64_t> term_floor_{kWallClockFloor};
  std::atomic<std::uint64_t> reserved_{UINT64_MAX};
  std::mutex reserve_mu_;
  TokenReservations* reservations_ = nullptr;  // under reserve_mu_
};

}  // namespace latch::store
