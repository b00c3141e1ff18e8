#pragma once
// JSON bodies of the HTTP adapter: rendering outcomes and entities, reading request bodies,
// ids and query parameters, the error responses. Used by http_api.cpp only (Boost.JSON stays
// out of the headers that the rest of the demo includes).
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "adapters/http_server.h"
#include "app/outcome.h"
#include "domain/model.h"

namespace latch::demo {
namespace json = boost::json;

int StatusOf(ErrorCode code);
std::string_view NameOf(ErrorCode code);

HttpResponse Json(int status, const json::value& body);
// {"error": NameOf(code), "message": ...} with StatusOf(code).
HttpResponse Error(const AppError& error);
HttpResponse BadRequest(std::string message);
HttpResponse MethodNotAllowed(std::string_view allowed);  // 405 with an Allow header
HttpResponse NotFound(std::string_view target);

json::object EventJson(const Event& e);
json::object ReservationJson(const Reservation& r);

template <class T, class ToJson>
HttpResponse Render(const Outcome<T>& outcome, int ok_status, ToJson to_json) {
  if (!outcome.ok()) return Error(outcome.error());
  return Json(ok_status, to_json(outcome.value()));
}

// A positive decimal id that fits int64, or nullopt.
std::optional<std::int64_t> ParseId(std::string_view text);
// The body as a JSON object, or nullopt and the 400 response that says why not in *error.
std::optional<json::object> ParseObject(const std::string& body, HttpResponse* error);
// An integral JSON number (no fraction, no exponent form), or nullopt.
std::optional<std::int64_t> IntegerOf(const json::value& v);
// A required string field, or nullopt and the 400 response in *error.
std::optional<std::string> StringField(const json::object& o, const char* name,
                                       HttpResponse* error);
// The value of `name` in a query string (no percent-decoding: only numbers are read).
std::optional<std::string_view> QueryParam(std::string_view query, std::string_view name);

}  // namespace latch::demo
