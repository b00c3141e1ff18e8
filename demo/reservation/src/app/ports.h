#pragma once
// What the use cases need from the outside world, as interfaces: a transactional store
// (PostgreSQL in production, adapters/pg_store) and per-seat locks (latch::Lock over Redis or
// latchd, adapters/latch_seat_locks). Every call may block; the HTTP adapter runs use cases
// on worker threads, never on its I/O thread.
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/outcome.h"
#include "domain/model.h"

namespace latch::demo {

using Millis = std::chrono::milliseconds;

// A response as first sent for an idempotency key, replayed byte for byte on a retry.
struct StoredResponse {
  int status = 0;
  std::string body;
};

// What an idempotency key already stands for.
struct IdempotencyRecord {
  std::string request;  // the canonical form of the request first sent with the key
  StoredResponse response;
};

// One seat to hold, with the fencing token of its lock when the lock server hands them out.
struct SeatClaim {
  SeatNo seat = 0;
  std::optional<std::int64_t> fencing_token;
};

// One database transaction. Destroying it without Commit() rolls it back.
class ReservationTx {
 public:
  virtual ~ReservationTx() = default;

  // Claims `key` for this transaction: nullopt when claimed (the key row is inserted, visible
  // to others at commit), else the record stored under it. Waits while another open
  // transaction holds an uncommitted claim on the same key, so concurrent retries see the
  // first request's stored response rather than running it again.
  virtual Outcome<std::optional<IdempotencyRecord>> ClaimIdempotencyKey(
      const std::string& key, const std::string& request) = 0;
  // Stores the response under the claimed key and commits the transaction.
  virtual Outcome<Unit> CommitWithResponse(const std::string& key,
                                           const StoredResponse& response) = 0;

  // The conditional write, defence 2: creates a held reservation and moves every seat from
  // available to reserved in one statement whose WHERE demands status 'available' and a
  // fencing token not lower than the seat's stored one. Expired holds on these seats are
  // released first. All seats or none: kSeatTaken, kStaleFence or kNotFound otherwise (and
  // nothing of the hold stays in the transaction). With `commit`, a successful hold is
  // committed with it (one round trip when nothing else is to be done in the transaction).
  virtual Outcome<Reservation> HoldSeats(EventId event, const std::string& user,
                                         const std::vector<SeatClaim>& seats, Millis hold,
                                         bool commit) = 0;

  // The reservation, locked for update (a hold past its time is expired first).
  virtual Outcome<Reservation> LockReservation(ReservationId id) = 0;
  // Precondition: the reservation is locked by this transaction and its state allows it.
  // Both change the reservation and its seats and commit the transaction.
  virtual Outcome<Unit> ConfirmAndCommit(ReservationId id) = 0;
  virtual Outcome<Unit> CancelAndCommit(ReservationId id) = 0;

  // Idempotent: a no-op after a call above committed.
  virtual Outcome<Unit> Commit() = 0;
};

class ReservationStore {
 public:
  virtual ~ReservationStore() = default;
  virtual Outcome<std::unique_ptr<ReservationTx>> Begin() = 0;

  virtual Outcome<Event> CreateEvent(const std::string& name, SeatNo seat_count) = 0;
  virtual Outcome<Event> GetEvent(EventId id) = 0;
  // Available seats numbered above `after`, skipping `offset` of them, at most `limit`:
  // read from the index of available seats (a page costs its size, not the event's).
  virtual Outcome<SeatPage> AvailableSeats(EventId id, SeatNo after, std::int64_t offset,
                                           std::int64_t limit) = 0;
  // The status of seats first..last (those that exist), expired holds counted as available.
  virtual Outcome<SeatMap> Seats(EventId id, SeatNo first, SeatNo last) = 0;
  // Reads a reservation; a hold past its time is expired (and its seats freed) first.
  virtual Outcome<Reservation> GetReservation(ReservationId id) = 0;
  // Expires every hold past its time and frees its seats; returns how many reservations.
  virtual Outcome<std::int64_t> ExpireDueHolds() = 0;
  virtual Outcome<Unit> Ping() = 0;
};

// Locks held by one request, released when destroyed.
class HeldLocks {
 public:
  virtual ~HeldLocks() = default;
  // One per key, in the order the keys were given: the fencing token, when the server has them.
  virtual const std::vector<std::optional<std::int64_t>>& fencing_tokens() const = 0;
};

class SeatLocks {
 public:
  virtual ~SeatLocks() = default;
  // Takes every lock in the given order; all or none. kLockBusy when one is held elsewhere,
  // kUnavailable when the lock server cannot be reached.
  virtual Outcome<std::unique_ptr<HeldLocks>> AcquireAll(const std::vector<std::string>& keys) = 0;
  virtual Outcome<Unit> Ping() = 0;
};

}  // namespace latch::demo
