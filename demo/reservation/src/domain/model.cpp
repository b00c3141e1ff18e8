#include "domain/model.h"

namespace latch::demo {

std::string_view SeatStatusName(SeatStatus s) {
  switch (s) {
    case SeatStatus::kAvailable:
      return "available";
    case SeatStatus::kReserved:
      return "reserved";
    case SeatStatus::kConfirmed:
      return "confirmed";
  }
  return "unknown";
}

std::optional<SeatStatus> ParseSeatStatus(std::string_view name) {
  for (SeatStatus s : {SeatStatus::kAvailable, SeatStatus::kReserved, SeatStatus::kConfirmed}) {
    if (SeatStatusName(s) == name) return s;
  }
  return std::nullopt;
}

std::string_view ReservationStatusName(ReservationStatus s) {
  switch (s) {
    case ReservationStatus::kHeld:
      return "held";
    case ReservationStatus::kConfirmed:
      return "confirmed";
    case ReservationStatus::kCancelled:
      return "cancelled";
    case ReservationStatus::kExpired:
      return "expired";
  }
  return "unknown";
}

std::optional<ReservationStatus> ParseReservationStatus(std::string_view name) {
  for (ReservationStatus s : {ReservationStatus::kHeld, ReservationStatus::kConfirmed,
                              ReservationStatus::kCancelled, ReservationStatus::kExpired}) {
    if (ReservationStatusName(s) == name) return s;
  }
  return std::nullopt;
}

}  // namespace latch::demo
