#pragma once
// The reservation domain: events with numbered seats, and reservations that hold seats for a
// while before they are confirmed. Plain values, no I/O.
//
// Seat:        available --reserve--> reserved --confirm--> confirmed
//                  ^                      |                     |
//                  +---- cancel / hold expiry ------------------+ (cancel only)
// Reservation: held --> confirmed | cancelled | expired;  confirmed --> cancelled
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace latch::demo {

using EventId = std::int64_t;
using ReservationId = std::int64_t;
using SeatNo = std::int32_t;

enum class SeatStatus { kAvailable, kReserved, kConfirmed };
enum class ReservationStatus { kHeld, kConfirmed, kCancelled, kExpired };

std::string_view SeatStatusName(SeatStatus s);
std::optional<SeatStatus> ParseSeatStatus(std::string_view name);
std::string_view ReservationStatusName(ReservationStatus s);
std::optional<ReservationStatus> ParseReservationStatus(std::string_view name);

struct Event {
  EventId id = 0;
  std::string name;
  SeatNo seat_count = 0;
  std::int64_t available = 0;  // seats available now (expired holds count as available)
};

struct Reservation {
  ReservationId id = 0;
  EventId event_id = 0;
  std::string user;
  std::vector<SeatNo> seats;  // ascending
  ReservationStatus status = ReservationStatus::kHeld;
  std::string hold_expires_at;  // ISO 8601 UTC, from the database clock
};

// One page of available seat numbers of an event.
struct SeatPage {
  EventId event_id = 0;
  std::int64_t available = 0;  // all available seats, not just this page
  std::vector<SeatNo> seats;
};

// The status of a range of an event's seats (the seat-map page).
struct SeatMap {
  EventId event_id = 0;
  SeatNo first = 1;                 // the seat number of statuses[0]
  std::vector<SeatStatus> statuses;  // seats first, first + 1, ... (those that exist)
};

}  // namespace latch::demo
