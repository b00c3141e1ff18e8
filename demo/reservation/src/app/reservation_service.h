#pragma once
// The use cases: create and read events, reserve seats (hold), confirm, cancel, expire holds.
// Synchronous: each call blocks on the store and the lock server, so callers run them on
// worker threads.
//
// Reserve applies the three defences in this order:
//   1. idempotency key (optional): claim it in the transaction, or replay the stored response;
//   2. a lock per seat, taken in ascending seat order, released after the commit;
//   3. the conditional UPDATE in the store (status and fencing token), in the same
//      transaction as the reservation row and the stored response.
// Each defence stands on its own: without the locks (seat_locks == nullptr) the conditional
// UPDATE still refuses a second booking, which the tests check.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "app/ports.h"

namespace latch::demo {

struct ReserveCommand {
  EventId event = 0;
  std::string user;
  std::vector<std::int64_t> seats;  // as sent; validated by the use case
};

class ReservationService {
 public:
  // `seat_locks` may be null: the lock defence is then off (tests of the other defences).
  // Both must outlive the service.
  ReservationService(ReservationStore& store, SeatLocks* seat_locks, Millis hold);

  Outcome<Event> CreateEvent(const std::string& name, std::int64_t seat_count);
  Outcome<Event> GetEvent(EventId id);
  Outcome<SeatPage> AvailableSeats(EventId id, std::int64_t after, std::int64_t offset,
                                   std::int64_t limit);
  // The status of `count` seats from seat `first` on (the seat-map page).
  Outcome<SeatMap> Seats(EventId id, std::int64_t first, std::int64_t count);
  Outcome<Reservation> GetReservation(ReservationId id);

  Outcome<Reservation> Reserve(const ReserveCommand& command);
  // With an idempotency key: `render` turns the outcome into the response that is stored with
  // the key (in the same transaction as the booking) and replayed for every retry. A key
  // first used with a different request gives kIdempotencyMismatch (never stored). Transient
  // failures (lock busy, unavailable, transaction conflict) are not stored: the key stays free.
  using Render = std::function<StoredResponse(const Outcome<Reservation>&)>;
  struct Replayable {
    StoredResponse response;
    bool replayed = false;  // true: the stored response of an earlier request
  };
  Outcome<Replayable> ReserveIdempotent(const ReserveCommand& command, const std::string& key,
                                        const Render& render);

  Outcome<Reservation> Confirm(ReservationId id);
  Outcome<Reservation> Cancel(ReservationId id);
  Outcome<std::int64_t> ExpireHolds();

  // The canonical request an idempotency key is bound to.
  static std::string CanonicalRequest(const ReserveCommand& command);

 private:
  // With `commit`, a successful hold is committed with it.
  Outcome<Reservation> ReserveInTx(ReservationTx& tx, const ReserveCommand& command,
                                   std::unique_ptr<HeldLocks>* locks, bool commit);
  Outcome<Reservation> ChangeState(ReservationId id, bool confirm);

  ReservationStore& store_;
  SeatLocks* seat_locks_;
  Millis hold_;
};

}  // namespace latch::demo
