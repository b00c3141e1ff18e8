#pragma once
// The HTTP adapter: routes a request to a use case and renders its outcome.
//
//   GET  /                               the seat-map page (web/index.html, app.js, app.css)
//   GET  /openapi.json                   this API described (web/openapi.json)
//   GET  /health                         200 / 503 with the state of PostgreSQL and the lock server
//   POST /events                         {"name": "...", "seats": N}            -> 201 event
//   GET  /events/{id}                    event with the count of available seats
//   GET  /events/{id}/seats?after=&limit=    available seat numbers (ascending), paged by seat
//   GET  /events/{id}/seatmap?from=&count=   every seat's status, for the page
//   POST /events/{id}/reservations       {"user": "...", "seats": [1, 2]}       -> 201 held
//        optional header Idempotency-Key
//   GET  /reservations/{id}
//   POST /reservations/{id}/confirm      held -> confirmed
//   POST /reservations/{id}/cancel       held|confirmed -> cancelled (seats freed)
//
// Every error is {"error": "<code>", "message": "..."} with the status of its ErrorCode; an
// unknown path is 404, a known path with another method 405 (with Allow).
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "adapters/http_server.h"
#include "app/reservation_service.h"

namespace latch::demo {

// One method on one path template ("/events/{id}/seats").
struct RouteInfo {
  std::string method;
  std::string path;
};

class HttpApi {
 public:
  // `locks` may be null (the health check then reports the lock defence as off).
  HttpApi(ReservationService& service, ReservationStore& store, SeatLocks* locks);

  // Never throws for any input; every failure is a JSON error response. The response's
  // log_note says how many round trips to PostgreSQL and the lock server the request made.
  HttpResponse Handle(const HttpRequest& request);

  // Every method and path this API answers, from the table Handle() routes with.
  std::vector<RouteInfo> Routes() const;

 private:
  using Captures = std::vector<std::string_view>;  // the {…} segments of the path, in order
  using Handler = std::function<HttpResponse(const HttpRequest&, const Captures&)>;
  struct Route {
    std::string method;
    std::string path;
    std::vector<std::string> segments;  // "{id}" matches any one segment
    Handler handler;
  };

  void Add(std::string method, std::string path, Handler handler);
  HttpResponse Dispatch(const HttpRequest& request);

  HttpResponse Health();
  HttpResponse CreateEvent(const HttpRequest& request);
  HttpResponse ListSeats(std::int64_t event, std::string_view query);
  HttpResponse ShowSeatMap(std::int64_t event, std::string_view query);
  HttpResponse Reserve(const HttpRequest& request, std::int64_t event);

  ReservationService& service_;
  ReservationStore& store_;
  SeatLocks* locks_;
  std::vector<Route> routes_;
};

}  // namespace latch::demo
