#pragma once
// Business rules of the reservation domain: what a valid request is, which transitions a
// reservation allows, and the name of a seat's lock. Pure functions, no I/O.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "domain/model.h"

namespace latch::demo {

inline constexpr std::size_t kMaxEventNameBytes = 200;
inline constexpr std::size_t kMaxUserBytes = 128;
inline constexpr SeatNo kMaxSeatsPerEvent = 100'000;
inline constexpr std::size_t kMaxSeatsPerReservation = 20;
inline constexpr std::int64_t kMaxSeatMapSeats = 2000;  // seats in one seat-map reply

// nullopt when valid, else the message for the client.
std::optional<std::string> ValidateNewEvent(std::string_view name, std::int64_t seat_count);
// Seats must be >= 1, unique and at most kMaxSeatsPerReservation; the user non-empty.
// (Whether the seats exist is the store's answer, not a rule.)
std::optional<std::string> ValidateSeatRequest(std::string_view user,
                                               const std::vector<std::int64_t>& seats);

// The seats in the order their locks are taken: ascending, so that two requests for
// overlapping seat sets always contend on the same first seat and can never deadlock.
std::vector<SeatNo> LockOrder(const std::vector<std::int64_t>& seats);
// "lock:seat:<event>:<seat>"
std::string SeatLockKey(EventId event, SeatNo seat);

// What a confirm or a cancel does to a reservation in a given state.
enum class Transition {
  kApply,        // change the state (and the seats)
  kAlreadyDone,  // the reservation is already in the target state: answer it unchanged
  kReject,       // not allowed from this state (409)
};
Transition ConfirmTransition(ReservationStatus current);
Transition CancelTransition(ReservationStatus current);

}  // namespace latch::demo
