#include "app/reservation_service.h"

#include "domain/rules.h"

namespace latch::demo {
namespace {

// Failures that say nothing lasting about the request: a retry may succeed, so they are not
// stored under an idempotency key.
bool Transient(ErrorCode code) {
  return code == ErrorCode::kLockBusy || code == ErrorCode::kUnavailable ||
         code == ErrorCode::kConflict || code == ErrorCode::kInternal;
}

}  // namespace

ReservationService::ReservationService(ReservationStore& store, SeatLocks* seat_locks, Millis hold)
    : store_(store), seat_locks_(seat_locks), hold_(hold) {}

Outcome<Event> ReservationService::CreateEvent(const std::string& name, std::int64_t seat_count) {
  if (auto bad = ValidateNewEvent(name, seat_count)) return AppError{ErrorCode::kBadInput, *bad};
  return store_.CreateEvent(name, static_cast<SeatNo>(seat_count));
}

Outcome<Event> ReservationService::GetEvent(EventId id) { return store_.GetEvent(id); }

Outcome<SeatPage> ReservationService::AvailableSeats(EventId id, std::int64_t after,
                                                     std::int64_t offset, std::int64_t limit) {
  if (offset < 0) return AppError{ErrorCode::kBadInput, "\"offset\" must not be negative"};
  if (after < 0 || after > kMaxSeatsPerEvent) {
    return AppError{ErrorCode::kBadInput, "\"after\" must be a seat number or 0"};
  }
  if (limit < 1 || limit > 10'000) {
    return AppError{ErrorCode::kBadInput, "\"limit\" must be between 1 and 10000"};
  }
  return store_.AvailableSeats(id, static_cast<SeatNo>(after), offset, limit);
}

Outcome<SeatMap> ReservationService::Seats(EventId id, std::int64_t first, std::int64_t count) {
  if (first < 1 || first > kMaxSeatsPerEvent) {
    return AppError{ErrorCode::kBadInput, "\"from\" must be a seat number"};
  }
  if (count < 1 || count > kMaxSeatMapSeats) {
    return AppError{ErrorCode::kBadInput, "\"count\" must be between 1 and " +
                                              std::to_string(kMaxSeatMapSeats)};
  }
  auto event = store_.GetEvent(id);  // 404 for an unknown event, not an empty map
  if (!event.ok()) return event.error();
  return store_.Seats(id, static_cast<SeatNo>(first), static_cast<SeatNo>(first + count - 1));
}

Outcome<Reservation> ReservationService::GetReservation(ReservationId id) {
  return store_.GetReservation(id);
}

std::string ReservationService::CanonicalRequest(const ReserveCommand& command) {
  std::string out = "reserve event=" + std::to_string(command.event) + " seats=";
  for (std::size_t i = 0; i < command.seats.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(command.seats[i]);
  }
  out += " user=" + command.user;
  return out;
}

Outcome<Reservation> ReservationService::ReserveInTx(ReservationTx& tx,
                                                     const ReserveCommand& command,
                                                     std::unique_ptr<HeldLocks>* locks,
                                                     bool commit) {
  std::vector<SeatNo> order = LockOrder(command.seats);
  std::vector<SeatClaim> claims;
  claims.reserve(order.size());
  for (SeatNo seat : order) claims.push_back({seat, std::nullopt});
  if (seat_locks_ != nullptr) {
    std::vector<std::string> keys;
    keys.reserve(order.size());
    for (SeatNo seat : order) keys.push_back(SeatLockKey(command.event, seat));
    auto held = seat_locks_->AcquireAll(keys);
    if (!held.ok()) return held.error();
    const auto& tokens = (*held)->fencing_tokens();
    for (std::size_t i = 0; i < claims.size() && i < tokens.size(); ++i) {
      claims[i].fencing_token = tokens[i];
    }
    *locks = std::move(held.value());
  }
  return tx.HoldSeats(command.event, command.user, claims, hold_, commit);
}

Outcome<Reservation> ReservationService::Reserve(const ReserveCommand& command) {
  if (auto bad = ValidateSeatRequest(command.user, command.seats)) {
    return AppError{ErrorCode::kBadInput, *bad};
  }
  auto tx = store_.Begin();
  if (!tx.ok()) return tx.error();
  std::unique_ptr<HeldLocks> locks;  // released after the commit (destroyed last)
  auto reserved = ReserveInTx(**tx, command, &locks, /*commit=*/true);
  if (!reserved.ok()) return reserved;
  auto committed = (*tx)->Commit();  // done with the hold already: a no-op
  if (!committed.ok()) return committed.error();
  return reserved;
}

Outcome<ReservationService::Replayable> ReservationService::ReserveIdempotent(
    const ReserveCommand& command, const std::string& key, const Render& render) {
  const std::string request = CanonicalRequest(command);
  if (auto bad = ValidateSeatRequest(command.user, command.seats)) {
    // Bad input is answered, not stored: it never reached the point of booking anything.
    return Replayable{render(AppError{ErrorCode::kBadInput, *bad}), false};
  }
  auto tx = store_.Begin();
  if (!tx.ok()) return tx.error();
  auto claim = (*tx)->ClaimIdempotencyKey(key, request);
  if (!claim.ok()) return claim.error();
  if (claim->has_value()) {
    const IdempotencyRecord& record = **claim;
    if (record.request != request) {
      return AppError{ErrorCode::kIdempotencyMismatch,
                      "Idempotency-Key was first used with a different request"};
    }
    return Replayable{record.response, true};
  }
  std::unique_ptr<HeldLocks> locks;  // released after the commit
  auto reserved = ReserveInTx(**tx, command, &locks, /*commit=*/false);
  if (!reserved.ok() && Transient(reserved.error().code)) return reserved.error();
  StoredResponse response = render(reserved);
  auto committed = (*tx)->CommitWithResponse(key, response);
  if (!committed.ok()) return committed.error();
  return Replayable{std::move(response), false};
}

Outcome<Reservation> ReservationService::ChangeState(ReservationId id, bool confirm) {
  auto tx = store_.Begin();
  if (!tx.ok()) return tx.error();
  auto current = (*tx)->LockReservation(id);
  if (!current.ok()) return current;
  const ReservationStatus from = current->status;
  switch (confirm ? ConfirmTransition(from) : CancelTransition(from)) {
    case Transition::kAlreadyDone:
      return current;
    case Transition::kReject:
      return AppError{ErrorCode::kInvalidState,
                      std::string("reservation is ") + std::string(ReservationStatusName(from)) +
                          (confirm ? ": it cannot be confirmed" : ": it cannot be cancelled")};
    case Transition::kApply:
      break;
  }
  auto applied = confirm ? (*tx)->ConfirmAndCommit(id) : (*tx)->CancelAndCommit(id);
  if (!applied.ok()) return applied.error();
  Reservation after = std::move(current.value());
  after.status = confirm ? ReservationStatus::kConfirmed : ReservationStatus::kCancelled;
  return after;
}

Outcome<Reservation> ReservationService::Confirm(ReservationId id) { return ChangeState(id, true); }
Outcome<Reservation> ReservationService::Cancel(ReservationId id) { return ChangeState(id, false); }
Outcome<std::int64_t> ReservationService::ExpireHolds() { return store_.ExpireDueHolds(); }

}  // namespace latch::demo
