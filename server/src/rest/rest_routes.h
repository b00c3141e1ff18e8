#pragma once
// What the REST endpoint answers to a complete request, apart from the HTTP mechanics
// (rest_session.cpp): the token check, the choice between the request forms, and Upstash's
// status codes and bodies for everything that goes wrong. No Beast here. Worker thread only.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace latch {
struct ServerState;
struct ClientInfo;
}  // namespace latch

namespace latch::rest {

// The parts of a request the routes read; views into the session's parser.
struct RequestView {
  std::string_view method;  // "GET", "POST", ... as sent
  std::string_view target;  // path and query, as sent
  std::string_view body;
  std::string_view encoding;       // Upstash-Encoding
  std::string_view telemetry_sdk;  // Upstash-Telemetry-Sdk, e.g. "@upstash/redis@v1.39.0"
  bool authorized = false;
};

struct RouteResult {
  int status = 200;
  std::string body;   // JSON
  std::string allow;  // the Allow header of a 405
};

// Routes and runs one request:
//   POST /                JSON command         -> {"result"} 200 | {"error"} 400
//   GET|POST|PUT /<cmd>/<arg>/...[?opt=value]  -> the same (a POST body is the last argument)
//   POST /pipeline        JSON command list    -> [{"result"}|{"error"}, ...] 200
//   POST /multi-exec      JSON command list    -> the same, atomically
// 401 before anything runs when the request is not authorized; 405 for other methods.
// A request holding a Lua script runs on the script thread (command_runner.h's RunRequest):
// Route then returns nullopt and calls `later` once, from any thread, with what the caller
// runs on its worker for the answer.
using RouteFinish = std::function<RouteResult()>;
using RouteLater = std::function<void(RouteFinish)>;
std::optional<RouteResult> Route(ServerState& state, const std::shared_ptr<ClientInfo>& info,
                                 const RequestView& request, const RouteLater& later);

// The token rules: rest-token when set ("Authorization: Bearer <token>" or ?_token=<token>);
// otherwise requirepass, when set, is the token; otherwise every request is authorized.
bool Authorized(ServerState& state, std::string_view authorization, std::string_view target);

RouteResult UnauthorizedResult();                          // 401
RouteResult BodyTooLargeResult(const ServerState& state);  // 413
RouteResult HeaderTooLargeResult();                        // 431

// The upstash-sync-token of a response. The hosted service uses it so that a client reads its
// own writes across replicas; a single latchd is always up to date, so the client's token is
// not needed and the server's monotonic clock (ms) is returned, which only moves forward.
std::string SyncToken(const ServerState& state);

}  // namespace latch::rest
