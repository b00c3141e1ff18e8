#include "rest/rest_routes.h"

#include "commands/arg_parse.h"
#include "commands/errors.h"
#include "rest/command_runner.h"
#include "rest/rest_endpoint.h"
#include "rest/rest_text.h"
#include "rest/url_args.h"
#include "server_state.h"

namespace latch::rest {
namespace {

// Upstash's answer to a missing or wrong token.
constexpr char kUnauthorized[] = "WRONGPASS invalid or missing auth token";
constexpr char kAllow[] = "GET, HEAD, POST, PUT";

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

RouteResult Error(int status, std::string_view message) { return {status, JsonError(message)}; }

RouteResult Job(const RunOptions& options, CommandJob::Form form, std::vector<Args> commands) {
  RouteResult r;
  r.job = std::make_unique<CommandJob>(options, form, std::move(commands));
  return r;
}

RouteResult RunList(const RunOptions& options, std::string_view body, bool transaction) {
  std::vector<Args> commands;
  const std::int64_t max_bulk = options.state.proto_max_bulk_len.load(std::memory_order_relaxed);
  if (ArgsError e = ParseJsonCommandList(body, max_bulk, &commands)) return Error(400, *e);
  return Job(options, transaction ? CommandJob::Form::kTransaction : CommandJob::Form::kPipeline,
             std::move(commands));
}

RouteResult RunBodyCommand(const RunOptions& options, std::string_view body) {
  if (body.empty()) {
    return Error(400,
                 "ERR empty command: POST a JSON array such as [\"PING\"] to /, or use "
                 "/<command>/<argument>/...");
  }
  std::vector<Args> commands(1);
  const std::int64_t max_bulk = options.state.proto_max_bulk_len.load(std::memory_order_relaxed);
  if (ArgsError e = ParseJsonCommand(body, max_bulk, &commands[0])) return Error(400, *e);
  return Job(options, CommandJob::Form::kSingle, std::move(commands));
}

RouteResult RunPathCommand(const RunOptions& options, const Target& target, std::string_view body) {
  std::vector<Args> commands(1);
  Args& args = commands[0];
  const std::int64_t max_bulk = options.state.proto_max_bulk_len.load(std::memory_order_relaxed);
  if (ArgsError e = PathArgs(target.path, max_bulk, &args)) return Error(400, *e);
  if (!body.empty()) {
    if (static_cast<std::int64_t>(body.size()) > max_bulk) {
      return Error(400, kBulkTooLongError);
    }
    args.emplace_back(body);
  }
  if (ArgsError e = QueryArgs(target.query, max_bulk, &args)) return Error(400, *e);
  return Job(options, CommandJob::Form::kSingle, std::move(commands));
}

}  // namespace

RouteResult Route(ServerState& state, const std::shared_ptr<ClientInfo>& info,
                  const RequestView& request) {
  const std::string_view m = request.method;
  if (m != "GET" && m != "HEAD" && m != "POST" && m != "PUT") {
    RouteResult r = Error(405, "ERR HTTP method not allowed: use GET, HEAD, POST or PUT");
    r.allow = kAllow;
    return r;
  }
  if (request.user == nullptr) return UnauthorizedResult();
  NoteClientLibrary(state, *info, request.telemetry_sdk);
  RunOptions options{
      state, info, request.user,
      EqualsNoCase(request.encoding, "base64") ? Encoding::kBase64 : Encoding::kPlain};
  const Target target = SplitTarget(request.target);
  if (target.path == "/pipeline") return RunList(options, request.body, false);
  if (target.path == "/multi-exec") return RunList(options, request.body, true);
  if (target.path == "/" || target.path.empty()) return RunBodyCommand(options, request.body);
  return RunPathCommand(options, target, request.body);
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
