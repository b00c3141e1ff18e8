#include "adapters/http_json.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <charconv>

namespace latch::demo {

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


}  // namespace latch::demo
