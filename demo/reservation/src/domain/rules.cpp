#include "domain/rules.h"

#include <algorithm>
#include <set>

namespace latch::demo {

std::optional<std::string> ValidateNewEvent(std::string_view name, std::int64_t seat_count) {
  if (name.empty()) return "\"name\" must not be empty";
  if (name.find('\0') != std::string_view::npos) return "\"name\" must not contain NUL";
  if (name.size() > kMaxEventNameBytes) {
    return "\"name\" is longer than " + std::to_string(kMaxEventNameBytes) + " bytes";
  }
  if (seat_count < 1 || seat_count > kMaxSeatsPerEvent) {
    return "\"seats\" must be between 1 and " + std::to_string(kMaxSeatsPerEvent);
  }
  return std::nullopt;
}

std::optional<std::string> ValidateSeatRequest(std::string_view user,
                                               const std::vector<std::int64_t>& seats) {
  if (user.empty()) return "\"user\" must not be empty";
  if (user.find('\0') != std::string_view::npos) return "\"user\" must not contain NUL";
  if (user.size() > kMaxUserBytes) {
    return "\"user\" is longer than " + std::to_string(kMaxUserBytes) + " bytes";
  }
  if (seats.empty()) return "\"seats\" must name at least one seat";
  if (seats.size() > kMaxSeatsPerReservation) {
    return "at most " + std::to_string(kMaxSeatsPerReservation) + " seats per reservation";
  }
  std::set<std::int64_t> seen;
  for (std::int64_t seat : seats) {
    if (seat < 1 || seat > kMaxSeatsPerEvent) {
      return "seat " + std::to_string(seat) + " is not a seat number (1.." +
             std::to_string(kMaxSeatsPerEvent) + ")";
    }
    if (!seen.insert(seat).second) return "seat " + std::to_string(seat) + " is listed twice";
  }
  return std::nullopt;
}

std::vector<SeatNo> LockOrder(const std::vector<std::int64_t>& seats) {
  std::vector<SeatNo> order;
  order.reserve(seats.size());
  for (std::int64_t seat : seats) order.push_back(static_cast<SeatNo>(seat));
  std::sort(order.begin(), order.end());
  order.erase(std::unique(order.begin(), order.end()), order.end());
  return order;
}

std::string SeatLockKey(EventId event, SeatNo seat) {
  return "lock:seat:" + std::to_string(event) + ":" + std::to_string(seat);
}

Transition ConfirmTransition(ReservationStatus current) {
  switch (current) {
    case ReservationStatus::kHeld:
      return Transition::kApply;
    case ReservationStatus::kConfirmed:
      return Transition::kAlreadyDone;
    case ReservationStatus::kCancelled:
    case ReservationStatus::kExpired:
      return Transition::kReject;
  }
  return Transition::kReject;
}

Transition CancelTransition(ReservationStatus current) {
  switch (current) {
    case ReservationStatus::kHeld:
    case ReservationStatus::kConfirmed:
      return Transition::kApply;
    case ReservationStatus::kCancelled:
      return Transition::kAlreadyDone;
    case ReservationStatus::kExpired:
      return Transition::kReject;
  }
  return Transition::kReject;
}

}  // namespace latch::demo
