#include "adapters/http_api.h"

#include <optional>

#include "adapters/http_json.h"
#include "adapters/round_trips.h"
#include "adapters/web_assets.h"
#include "domain/rules.h"

namespace latch::demo {
namespace {

struct Target {
  std::vector<std::string_view> segments;
  std::string_view query;
};

Target Split(std::string_view target) {
  Target out;
  std::size_t q = target.find('?');
  if (q != std::string_view::npos) {
    out.query = target.substr(q + 1);
    target = target.substr(0, q);
  }
  while (!target.empty()) {
    std::size_t start = target.find_first_not_of('/');
    if (start == std::string_view::npos) break;
    target.remove_prefix(start);
    std::size_t end = target.find('/');
    out.segments.push_back(target.substr(0, end));
    if (end == std::string_view::npos) break;
    target.remove_prefix(end);
  }
  return out;
}

std::vector<std::string> PatternSegments(std::string_view path) {
  std::vector<std::string> out;
  for (std::string_view s : Split(path).segments) out.emplace_back(s);
  return out;
}

bool Matches(const std::vector<std::string>& pattern, const std::vector<std::string_view>& path,
             std::vector<std::string_view>* captures) {
  if (pattern.size() != path.size()) return false;
  captures->clear();
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (!pattern[i].empty() && pattern[i].front() == '{') {
      captures->push_back(path[i]);
    } else if (pattern[i] != path[i]) {
      return false;
    }
  }
  return true;
}

// A query parameter that must be a non-negative integer when present: `fallback` when
// absent, nullopt (and the 400 in *error) when malformed.
std::optional<std::int64_t> NumberParam(std::string_view query, const char* name,
                                        std::int64_t fallback, HttpResponse* error) {
  auto v = QueryParam(query, name);
  if (!v) return fallback;
  if (*v == "0") return 0;
  auto n = ParseId(*v);
  if (!n) *error = BadRequest(std::string("\"") + name + "\" must be a non-negative integer");
  return n;
}

// One letter per seat in a seat map: available, held (reserved), confirmed.
char SeatLetter(SeatStatus s) {
  switch (s) {
    case SeatStatus::kAvailable:
      return 'a';
    case SeatStatus::kReserved:
      return 'h';
    case SeatStatus::kConfirmed:
      return 'c';
  }
  return 'h';
}

}  // namespace

HttpApi::HttpApi(ReservationService& service, ReservationStore& store, SeatLocks* locks)
    : service_(service), store_(store), locks_(locks) {
  for (const WebAsset& asset : WebAssets()) {
    Add("GET", std::string(asset.path), [&asset](const HttpRequest&, const Captures&) {
      return HttpResponse{200, std::string(asset.body), {}, std::string(asset.content_type), {}};
    });
  }
  Add("GET", "/health", [this](const HttpRequest&, const Captures&) { return Health(); });
  Add("POST", "/events", [this](const HttpRequest& r, const Captures&) { return CreateEvent(r); });
  // The routes below take an id first: a malformed one is a 400 whatever follows.
  auto with_id = [](const char* what, auto handle) {
    return [what, handle](const HttpRequest& r, const Captures& c) {
      auto id = ParseId(c[0]);
      if (!id) return BadRequest(std::string("bad ") + what + " id \"" + std::string(c[0]) + "\"");
      return handle(r, *id);
    };
  };
  Add("GET", "/events/{id}", with_id("event", [this](const HttpRequest&, std::int64_t id) {
        return Render(service_.GetEvent(id), 200, EventJson);
      }));
  Add("GET", "/events/{id}/seats", with_id("event", [this](const HttpRequest& r, std::int64_t id) {
        return ListSeats(id, Split(r.target).query);
      }));
  Add("GET", "/events/{id}/seatmap",
      with_id("event", [this](const HttpRequest& r, std::int64_t id) {
        return ShowSeatMap(id, Split(r.target).query);
      }));
  Add("POST", "/events/{id}/reservations",
      with_id("event", [this](const HttpRequest& r, std::int64_t id) { return Reserve(r, id); }));
  Add("GET", "/reservations/{id}",
      with_id("reservation", [this](const HttpRequest&, std::int64_t id) {
        return Render(service_.GetReservation(id), 200, ReservationJson);
      }));
  Add("POST", "/reservations/{id}/confirm",
      with_id("reservation", [this](const HttpRequest&, std::int64_t id) {
        return Render(service_.Confirm(id), 200, ReservationJson);
      }));
  Add("POST", "/reservations/{id}/cancel",
      with_id("reservation", [this](const HttpRequest&, std::int64_t id) {
        return Render(service_.Cancel(id), 200, ReservationJson);
      }));
}

void HttpApi::Add(std::string method, std::string path, Handler handler) {
  std::vector<std::string> segments = PatternSegments(path);
  routes_.push_back({std::move(method), std::move(path), std::move(segments), std::move(handler)});
}

std::vector<RouteInfo> HttpApi::Routes() const {
  std::vector<RouteInfo> out;
  for (const Route& r : routes_) out.push_back({r.method, r.path});
  return out;
}

HttpResponse HttpApi::Handle(const HttpRequest& request) {
  RoundTrips& trips = ThisThreadRoundTrips();
  trips = RoundTrips{};
  HttpResponse response = Dispatch(request);
  response.log_note =
      "pg=" + std::to_string(trips.postgres) + " lock=" + std::to_string(trips.lock_server);
  return response;
}

HttpResponse HttpApi::Dispatch(const HttpRequest& request) {
  const Target target = Split(request.target);
  std::vector<std::string_view> captures;
  std::string allowed;  // methods of the routes whose path matches
  for (const Route& route : routes_) {
    if (!Matches(route.segments, target.segments, &captures)) continue;
    if (route.method == request.method) return route.handler(request, captures);
    if (!allowed.empty()) allowed += ", ";
    allowed += route.method;
  }
  if (!allowed.empty()) return MethodNotAllowed(allowed);
  return NotFound(request.target);
}

HttpResponse HttpApi::Health() {
  auto pg = store_.Ping();
  std::optional<Outcome<Unit>> lock;
  if (locks_ != nullptr) lock = locks_->Ping();
  const bool healthy = pg.ok() && (!lock || lock->ok());
  json::object body{{"status", healthy ? "ok" : "unavailable"},
                    {"postgres", pg.ok() ? "ok" : pg.error().message}};
  body["lock_server"] = !lock ? std::string("off") : lock->ok() ? "ok" : lock->error().message;
  return Json(healthy ? 200 : 503, body);
}

HttpResponse HttpApi::CreateEvent(const HttpRequest& request) {
  HttpResponse error;
  auto body = ParseObject(request.body, &error);
  if (!body) return error;
  auto name = StringField(*body, "name", &error);
  if (!name) return error;
  const json::value* seats = body->if_contains("seats");
  if (seats == nullptr) return BadRequest("missing field \"seats\"");
  auto count = IntegerOf(*seats);
  if (!count) return BadRequest("field \"seats\" must be an integer");
  return Render(service_.CreateEvent(*name, *count), 201, EventJson);
}

HttpResponse HttpApi::ListSeats(std::int64_t event, std::string_view query) {
  HttpResponse error;
  auto after = NumberParam(query, "after", 0, &error);
  if (!after) return error;
  auto offset = NumberParam(query, "offset", 0, &error);
  if (!offset) return error;
  auto limit = QueryParam(query, "limit");
  std::optional<std::int64_t> n = limit ? ParseId(*limit) : 1000;
  if (!n) return BadRequest("\"limit\" must be a positive integer");
  return Render(service_.AvailableSeats(event, *after, *offset, *n), 200,
                [](const SeatPage& page) {
                  json::array seats;
                  for (SeatNo s : page.seats) seats.emplace_back(s);
                  return json::object{{"event_id", page.event_id},
                                      {"available", page.available},
                                      {"seats", std::move(seats)}};
                });
}

HttpResponse HttpApi::ShowSeatMap(std::int64_t event, std::string_view query) {
  HttpResponse error;
  auto from = NumberParam(query, "from", 1, &error);
  if (!from) return error;
  auto count = NumberParam(query, "count", kMaxSeatMapSeats, &error);
  if (!count) return error;
  return Render(service_.Seats(event, *from, *count), 200, [](const SeatMap& map) {
    std::string letters;
    letters.reserve(map.statuses.size());
    for (SeatStatus s : map.statuses) letters.push_back(SeatLetter(s));
    return json::object{{"event_id", map.event_id}, {"from", map.first}, {"seats", letters}};
  });
}

HttpResponse HttpApi::Reserve(const HttpRequest& request, std::int64_t event) {
  HttpResponse error;
  auto body = ParseObject(request.body, &error);
  if (!body) return error;
  auto user = StringField(*body, "user", &error);
  if (!user) return error;
  const json::value* seats = body->if_contains("seats");
  if (seats == nullptr) return BadRequest("missing field \"seats\"");
  if (!seats->is_array()) return BadRequest("field \"seats\" must be an array of integers");
  ReserveCommand command{event, *user, {}};
  for (const json::value& seat : seats->as_array()) {
    auto n = IntegerOf(seat);
    if (!n) return BadRequest("field \"seats\" must be an array of integers");
    command.seats.push_back(*n);
    if (command.seats.size() > kMaxSeatsPerReservation) break;  // the rules report it
  }
  const std::string* key = request.header("idempotency-key");
  if (key == nullptr) return Render(service_.Reserve(command), 201, ReservationJson);
  if (key->empty() || key->size() > 200) {
    return BadRequest("Idempotency-Key must be 1 to 200 characters");
  }
  auto result = service_.ReserveIdempotent(command, *key, [](const Outcome<Reservation>& outcome) {
    HttpResponse r = Render(outcome, 201, ReservationJson);
    return StoredResponse{r.status, std::move(r.body)};
  });
  if (!result.ok()) return Error(result.error());
  HttpResponse r{result->response.status, result->response.body, {}};
  if (result->replayed) r.headers.emplace_back("Idempotent-Replayed", "true");
  return r;
}

}  // namespace latch::demo
