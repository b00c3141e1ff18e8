#include "adapters/http_api.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <charconv>
#include <optional>

#include "domain/rules.h"

namespace latch::demo {
namespace json = boost::json;

int StatusOf(ErrorCode code) {
  switch (code) {
    case ErrorCode::kBadInput:
      return 400;
    case ErrorCode::kNotFound:
      return 404;
    case ErrorCode::kSeatTaken:
    case ErrorCode::kLockBusy:
    case ErrorCode::kStaleFence:
    case ErrorCode::kInvalidState:
    case ErrorCode::kConflict:
      return 409;
    case ErrorCode::kIdempotencyMismatch:
      return 422;
    case ErrorCode::kUnavailable:
      return 503;
    case ErrorCode::kInternal:
      return 500;
  }
  return 500;
}

std::string_view NameOf(ErrorCode code) {
  switch (code) {
    case ErrorCode::kBadInput:
      return "bad_request";
    case ErrorCode::kNotFound:
      return "not_found";
    case ErrorCode::kSeatTaken:
      return "seat_taken";
    case ErrorCode::kLockBusy:
      return "lock_busy";
    case ErrorCode::kStaleFence:
      return "stale_fence";
    case ErrorCode::kInvalidState:
      return "invalid_state";
    case ErrorCode::kConflict:
      return "conflict";
    case ErrorCode::kIdempotencyMismatch:
      return "idempotency_mismatch";
    case ErrorCode::kUnavailable:
      return "unavailable";
    case ErrorCode::kInternal:
      return "internal";
  }
  return "internal";
}

namespace {

HttpResponse Json(int status, const json::value& body) {
  return HttpResponse{status, json::serialize(body), {}};
}

HttpResponse Error(const AppError& error) {
  return Json(StatusOf(error.code),
              json::object{{"error", NameOf(error.code)}, {"message", error.message}});
}

HttpResponse BadRequest(std::string message) {
  return Error({ErrorCode::kBadInput, std::move(message)});
}

json::object EventJson(const Event& e) {
  return {{"id", e.id}, {"name", e.name}, {"seats", e.seat_count}, {"available", e.available}};
}

json::object ReservationJson(const Reservation& r) {
  json::array seats;
  for (SeatNo s : r.seats) seats.emplace_back(s);
  return {{"id", r.id},
          {"event_id", r.event_id},
          {"user", r.user},
          {"seats", std::move(seats)},
          {"status", ReservationStatusName(r.status)},
          {"hold_expires_at", r.hold_expires_at}};
}

template <class T, class ToJson>
HttpResponse Render(const Outcome<T>& outcome, int ok_status, ToJson to_json) {
  if (!outcome.ok()) return Error(outcome.error());
  return Json(ok_status, to_json(outcome.value()));
}

// A positive decimal id that fits int64, or nullopt.
std::optional<std::int64_t> ParseId(std::string_view text) {
  if (text.empty() || text.size() > 18) return std::nullopt;
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < 1) return std::nullopt;
  return v;
}

// The body as a JSON object, or the 400 response that says why not.
std::optional<json::object> ParseObject(const std::string& body, HttpResponse* error) {
  if (body.empty()) {
    *error = BadRequest("request body is empty: a JSON object is expected");
    return std::nullopt;
  }
  json::parse_options options;
  options.max_depth = 16;
  boost::system::error_code ec;
  json::value value = json::parse(body, ec, {}, options);
  if (ec) {
    *error = BadRequest("malformed JSON: " + ec.message());
    return std::nullopt;
  }
  if (!value.is_object()) {
    *error = BadRequest("the body must be a JSON object");
    return std::nullopt;
  }
  return std::move(value.as_object());
}

// An integral JSON number (no fraction, no exponent form), or nullopt.
std::optional<std::int64_t> IntegerOf(const json::value& v) {
  if (v.is_int64()) return v.as_int64();
  if (v.is_uint64() && v.as_uint64() <= static_cast<std::uint64_t>(INT64_MAX)) {
    return static_cast<std::int64_t>(v.as_uint64());
  }
  return std::nullopt;
}

// A required string field, or the 400 response.
std::optional<std::string> StringField(const json::object& o, const char* name,
                                       HttpResponse* error) {
  const json::value* v = o.if_contains(name);
  if (v == nullptr) {
    *error = BadRequest(std::string("missing field \"") + name + "\"");
    return std::nullopt;
  }
  if (!v->is_string()) {
    *error = BadRequest(std::string("field \"") + name + "\" must be a string");
    return std::nullopt;
  }
  return std::string(v->as_string());
}

struct Route {
  std::vector<std::string_view> parts;  // path segments
  std::string_view query;
};

Route Split(std::string_view target) {
  Route route;
  std::size_t q = target.find('?');
  if (q != std::string_view::npos) {
    route.query = target.substr(q + 1);
    target = target.substr(0, q);
  }
  while (!target.empty()) {
    std::size_t start = target.find_first_not_of('/');
    if (start == std::string_view::npos) break;
    target.remove_prefix(start);
    std::size_t end = target.find('/');
    route.parts.push_back(target.substr(0, end));
    if (end == std::string_view::npos) break;
    target.remove_prefix(end);
  }
  return route;
}

// The value of `name` in a query string (no percent-decoding: only numbers are read).
std::optional<std::string_view> QueryParam(std::string_view query, std::string_view name) {
  while (!query.empty()) {
    std::size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    std::size_t eq = pair.find('=');
    if (pair.substr(0, eq) == name) {
      return eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1);
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return std::nullopt;
}

HttpResponse MethodNotAllowed(std::string_view allowed) {
  HttpResponse r = Json(405, json::object{{"error", "method_not_allowed"},
                                          {"message", "use " + std::string(allowed)}});
  r.headers.emplace_back("Allow", std::string(allowed));
  return r;
}

HttpResponse NotFound(std::string_view target) {
  return Json(404, json::object{{"error", "not_found"},
                                {"message", "no such endpoint: " + std::string(target)}});
}

}  // namespace

HttpResponse HttpApi::Handle(const HttpRequest& req) {
  const Route route = Split(req.target);
  const auto& p = route.parts;
  const bool get = req.method == "GET";
  const bool post = req.method == "POST";

  if (p.size() == 1 && p[0] == "health") {
    if (!get) return MethodNotAllowed("GET");
    auto pg = store_.Ping();
    std::optional<Outcome<Unit>> lock;
    if (locks_ != nullptr) lock = locks_->Ping();
    const bool healthy = pg.ok() && (!lock || lock->ok());
    json::object body{{"status", healthy ? "ok" : "unavailable"},
                      {"postgres", pg.ok() ? "ok" : pg.error().message}};
    body["lock_server"] = !lock ? std::string("off") : lock->ok() ? "ok" : lock->error().message;
    return Json(healthy ? 200 : 503, body);
  }

  if (!p.empty() && p[0] == "events") {
    if (p.size() == 1) {
      if (!post) return MethodNotAllowed("POST");
      HttpResponse error;
      auto body = ParseObject(req.body, &error);
      if (!body) return error;
      auto name = StringField(*body, "name", &error);
      if (!name) return error;
      const json::value* seats = body->if_contains("seats");
      if (seats == nullptr) return BadRequest("missing field \"seats\"");
      auto count = IntegerOf(*seats);
      if (!count) return BadRequest("field \"seats\" must be an integer");
      return Render(service_.CreateEvent(*name, *count), 201, EventJson);
    }
    auto id = ParseId(p[1]);
    if (!id) return BadRequest("bad event id \"" + std::string(p[1]) + "\"");
    if (p.size() == 2) {
      if (!get) return MethodNotAllowed("GET");
      return Render(service_.GetEvent(*id), 200, EventJson);
    }
    if (p.size() == 3 && p[2] == "seats") {
      if (!get) return MethodNotAllowed("GET");
      std::int64_t offset = 0;
      std::int64_t limit = 1000;
      if (auto v = QueryParam(route.query, "offset")) {
        auto n = ParseId(*v);
        if (!n && *v != "0") return BadRequest("\"offset\" must be a non-negative integer");
        offset = n.value_or(0);
      }
      if (auto v = QueryParam(route.query, "limit")) {
        auto n = ParseId(*v);
        if (!n) return BadRequest("\"limit\" must be a positive integer");
        limit = *n;
      }
      return Render(service_.AvailableSeats(*id, offset, limit), 200, [](const SeatPage& page) {
        json::array seats;
        for (SeatNo s : page.seats) seats.emplace_back(s);
        return json::object{
            {"event_id", page.event_id}, {"available", page.available}, {"seats", seats}};
      });
    }
    if (p.size() == 3 && p[2] == "reservations") {
      if (!post) return MethodNotAllowed("POST");
      HttpResponse error;
      auto body = ParseObject(req.body, &error);
      if (!body) return error;
      auto user = StringField(*body, "user", &error);
      if (!user) return error;
      const json::value* seats = body->if_contains("seats");
      if (seats == nullptr) return BadRequest("missing field \"seats\"");
      if (!seats->is_array()) return BadRequest("field \"seats\" must be an array of integers");
      ReserveCommand command{*id, *user, {}};
      for (const json::value& seat : seats->as_array()) {
        auto n = IntegerOf(seat);
        if (!n) return BadRequest("field \"seats\" must be an array of integers");
        command.seats.push_back(*n);
        if (command.seats.size() > kMaxSeatsPerReservation) break;  // the rules report it
      }
      const std::string* key = req.header("idempotency-key");
      if (key == nullptr) {
        return Render(service_.Reserve(command), 201, ReservationJson);
      }
      if (key->empty() || key->size() > 200) {
        return BadRequest("Idempotency-Key must be 1 to 200 characters");
      }
      auto result =
          service_.ReserveIdempotent(command, *key, [](const Outcome<Reservation>& outcome) {
            HttpResponse r = Render(outcome, 201, ReservationJson);
            return StoredResponse{r.status, std::move(r.body)};
          });
      if (!result.ok()) return Error(result.error());
      HttpResponse r{result->response.status, result->response.body, {}};
      if (result->replayed) r.headers.emplace_back("Idempotent-Replayed", "true");
      return r;
    }
    return NotFound(req.target);
  }

  if (!p.empty() && p[0] == "reservations" && p.size() >= 2) {
    auto id = ParseId(p[1]);
    if (!id) return BadRequest("bad reservation id \"" + std::string(p[1]) + "\"");
    if (p.size() == 2) {
      if (!get) return MethodNotAllowed("GET");
      return Render(service_.GetReservation(*id), 200, ReservationJson);
    }
    if (p.size() == 3 && (p[2] == "confirm" || p[2] == "cancel")) {
      if (!post) return MethodNotAllowed("POST");
      auto outcome = p[2] == "confirm" ? service_.Confirm(*id) : service_.Cancel(*id);
      return Render(outcome, 200, ReservationJson);
    }
  }
  return NotFound(req.target);
}

}  // namespace latch::demo
