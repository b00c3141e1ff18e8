#pragma once
// The HTTP+JSON adapter: routes a request to a use case and renders its outcome.
//
//   GET  /health                         200 / 503 with the state of PostgreSQL and the lock server
//   POST /events                         {"name": "...", "seats": N}            -> 201 event
//   GET  /events/{id}                    event with the count of available seats
//   GET  /events/{id}/seats?offset=&limit=   available seat numbers (ascending)
//   POST /events/{id}/reservations       {"user": "...", "seats": [1, 2]}       -> 201 held
//        optional header Idempotency-Key
//   GET  /reservations/{id}
//   POST /reservations/{id}/confirm      held -> confirmed
//   POST /reservations/{id}/cancel       held|confirmed -> cancelled (seats freed)
//
// Every error is {"error": "<code>", "message": "..."} with the status of its ErrorCode.
#include "adapters/http_server.h"
#include "app/reservation_service.h"

namespace latch::demo {

class HttpApi {
 public:
  // `locks` may be null (the health check then reports the lock defence as off).
  HttpApi(ReservationService& service, ReservationStore& store, SeatLocks* locks)
      : service_(service), store_(store), locks_(locks) {}

  // Never throws for any input; every failure is a JSON error response.
  HttpResponse Handle(const HttpRequest& request);

 private:
  ReservationService& service_;
  ReservationStore& store_;
  SeatLocks* locks_;
};

int StatusOf(ErrorCode code);
std::string_view NameOf(ErrorCode code);

}  // namespace latch::demo
