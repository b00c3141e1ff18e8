#pragma once
// Runs the commands of one REST request through CommandTable::Dispatch, exactly as a RESP
// connection runs them (same table, checks, errors and limits: the RESP reply is written by
// the same handlers, then read back and turned into JSON), and gives Upstash's status code and
// body. No HTTP here: rest_session.cpp owns that, and this file serves every request form.
//
// A request is stateless, as on Upstash: each one runs on a fresh Session of its HTTP
// connection's client, logged in as the ACL user its credentials named (rest_auth.h): the
// dispatcher checks that user's permissions as for a RESP client, and re-reads them when
// any ACL changes during the request. Commands that
// only make sense on a connection (MULTI/EXEC/WATCH, AUTH, HELLO, QUIT, RESET) are refused;
// a transaction is POST /multi-exec. A blocking command does not block (as inside MULTI).
// Call on the worker thread that owns the HTTP connection.
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rest/json_args.h"
#include "rest/json_reply.h"

namespace latch {
struct ServerState;
struct ClientInfo;
}  // namespace latch

namespace latch::acl {
struct User;
}  // namespace latch::acl

namespace latch::rest {

struct RunOptions {
  ServerState& state;
  std::shared_ptr<ClientInfo> info;
  std::shared_ptr<const acl::User> user;  // who the request runs as (rest_auth.h)
  Encoding encoding = Encoding::kPlain;
};

struct RunResult {
  int status = 200;  // 200, or 400 when the command (or the transaction) failed
  std::string body;  // JSON
};

// {"result": ...} with 200, or {"error": "..."} with 400.
RunResult RunCommand(const RunOptions& options, const Args& args);
// [{"result": ...} | {"error": "..."}, ...] with 200: one entry per command, in order; a
// failing command does not stop the others (not atomic, as on Upstash).
RunResult RunPipeline(const RunOptions& options, const std::vector<Args>& commands);
// MULTI, the commands, EXEC: the entries as for a pipeline, all applied atomically; a
// command refused while queuing discards the whole transaction (400, Redis's EXECABORT).
RunResult RunTransaction(const RunOptions& options, const std::vector<Args>& commands);

// The error for a command that needs per-connection state; nullopt when it may run.
std::optional<std::string> RefusedOverRest(std::string_view command);

}  // namespace latch::rest
