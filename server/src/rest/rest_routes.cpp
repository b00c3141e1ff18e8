#include "rest/rest_routes.h"

#include "commands/arg_parse.h"
#include "commands/errors.h"
#include "rest/command_runner.h"
#include "rest/rest_endpoint.h"
#include "rest/url_args.h"
#include "server_state.h"

namespace latch::rest {
namespace {

// Upstash's answer to a missing or wrong token.
constexpr char kUnauthorized[] = "WRONGPASS invalid or missing auth token";
constexpr char kAllow[] = "GET, HEAD, POST, PUT";

// Compares every byte whatever the first mismatch, so the time taken tells nothing.
bool SameToken(std::string_view want, std::string_view given) {
  unsigned diff = want.size() != given.size();
  for (std::size_t i = 0; i < want.size(); ++i) {
    diff |= static_cast<unsigned>(want[i]) ^
            static_cast<unsigned>(i < given.size() ? given[i] : ~want[i]);
  }
  return diff == 0;
}

// "@upstash/redis@v1.39.0" -> CLIENT LIST's lib-name and lib-ver, as the SDK reports itself.
void NoteClientLibrary(ServerState& state, ClientInfo& info, std::string_view sdk) {
  if (sdk.empty()) return;
  const std::size_t at = sdk.rfind('@');
  const std::string_view name = at == 0 || at == std::string_view::npos ? sdk : sdk.substr(0, at);
  const std::string_view ver = name.size() == sdk.size() ? "" : sdk.substr(at + 1);
  std::lock_guard lock(state.clients.mu);
  if (info.lib_name != name) info.lib_name = std::string(name.substr(0, 128));
  if (info.lib_ver != ver) info.lib_ver = std::string(ver.substr(0, 128));
}

RouteResult Error(int status, std::string_view message) { return {status, JsonError(message), {}}; }

RouteResult FromRun(RunResult run) { return {run.status, std::move(run.body), {}}; }

// The request's answer, or nullopt when it comes through `later` (RunRequest).
std::optional<RouteResult> Run(const RunOptions& options, RequestForm form,
                               std::vector<Args> commands, const RouteLater& later) {
  std::optional<RunResult> run =
      RunRequest(options, form, std::move(commands), [later](Finish finish) {
        later([finish = std::move(finish)] { return FromRun(finish()); });
      });
  if (!run) return std::nullopt;
  return FromRun(std::move(*run));
}

std::optional<RouteResult> RunList(const RunOptions& options, std::string_view body,
                                   bool transaction, const RouteLater& later) {
  std::vector<Args> commands;
  const std::int64_t max_bulk = options.state.proto_max_bulk_len.load(std::memory_order_relaxed);
  if (ArgsError e = ParseJsonCommandList(body, max_bulk, &commands)) return Error(400, *e);
  return Run(options, transaction ? RequestForm::kTransaction : RequestForm::kPipeline,
             std::move(commands), later);
}

std::optional<RouteResult> RunBodyCommand(const RunOptions& options, std::string_view body,
                                          const RouteLater& later) {
  if (body.empty()) {
    return Error(400,
                 "ERR empty command: POST a JSON array such as [\"PING\"] to /, or use "
                 "/<command>/<argument>/...");
  }
  Args args;
  const std::int64_t max_bulk = options.state.proto_max_bulk_len.load(std::memory_order_relaxed);
  if (ArgsError e = ParseJsonCommand(body, max_bulk, &args)) return Error(400, *e);
  return Run(options, RequestForm::kCommand, {std::move(args)}, later);
}

std::optional<RouteResult> RunPathCommand(const RunOptions& options, const Target& target,
                                          std::string_view body, const RouteLater& later) {
  Args args;
  const std::int64_t max_bulk = options.state.proto_max_bulk_len.load(std::memory_order_relaxed);
  if (ArgsError e = PathArgs(target.path, max_bulk, &args)) return Error(400, *e);
  if (!body.empty()) {
    if (static_cast<std::int64_t>(body.size()) > max_bulk) {
      return Error(400, "ERR Protocol error: invalid bulk length");
    }
    args.emplace_back(body);
  }
  if (ArgsError e = QueryArgs(target.query, max_bulk, &args)) return Error(400, *e);
  return Run(options, RequestForm::kCommand, {std::move(args)}, later);
}

}  // namespace

std::optional<RouteResult> Route(ServerState& state, const std::shared_ptr<ClientInfo>& info,
                                 const RequestView& request, const RouteLater& later) {
  const std::string_view m = request.method;
  if (m != "GET" && m != "HEAD" && m != "POST" && m != "PUT") {
    RouteResult r = Error(405, "ERR HTTP method not allowed: use GET, HEAD, POST or PUT");
    r.allow = kAllow;
    return r;
  }
  if (!request.authorized) return UnauthorizedResult();
  NoteClientLibrary(state, *info, request.telemetry_sdk);
  RunOptions options{
      state, info,
      EqualsNoCase(request.encoding, "base64") ? Encoding::kBase64 : Encoding::kPlain};
  const Target target = SplitTarget(request.target);
  if (target.path == "/pipeline") return RunList(options, request.body, false, later);
  if (target.path == "/multi-exec") return RunList(options, request.body, true, later);
  if (target.path == "/" || target.path.empty()) {
    return RunBodyCommand(options, request.body, later);
  }
  return RunPathCommand(options, target, request.body, later);
}

bool Authorized(ServerState& state, std::string_view authorization, std::string_view target) {
  std::optional<std::string> given;
  if (authorization.size() >= 7 && EqualsNoCase(authorization.substr(0, 7), "bearer ")) {
    std::string_view token = authorization.substr(7);
    while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
    given = std::string(token);
  } else if (authorization.empty()) {
    given = QueryToken(SplitTarget(target).query);
  }
  std::string want;
  {
    std::lock_guard lock(state.options_mu);
    want = state.options.rest_token;
  }
  if (!want.empty()) return given && SameToken(want, *given);
  if (state.auth_required.load(std::memory_order_relaxed)) {
    return given && state.CheckPassword(*given);
  }
  return true;
}

RouteResult UnauthorizedResult() { return Error(401, kUnauthorized); }

RouteResult BodyTooLargeResult(const ServerState& state) {
  return Error(413, "ERR request body larger than client-query-buffer-limit (" +
                        std::to_string(state.client_query_buffer_limit.load()) + " bytes)");
}

RouteResult HeaderTooLargeResult() {
  return Error(431,
               "ERR request line and headers larger than 65536 bytes: send long "
               "commands as a JSON body (POST /)");
}

std::string SyncToken(const ServerState& state) { return std::to_string(state.clock->MonoMs()); }

std::string_view MaxClientsResponse() {
  static const std::string response = [] {
    const std::string body = JsonError(errors::kMaxClients);
    return "HTTP/1.1 503 Service Unavailable\r\nServer: latchd\r\n"
           "Content-Type: application/json\r\nContent-Length: " +
           std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
  }();
  return response;
}

}  // namespace latch::rest
