#pragma once
// Runs the commands of one REST request through CommandTable::Dispatch, exactly as a RESP
// connection runs them (same table, checks, errors and limits: the RESP reply is written by
// the same handlers, then read back and turned into JSON), and gives Upstash's status code and
// body. No HTTP here: rest_session.cpp owns that, and this file serves every request form.
//
// A request is stateless, as on Upstash: each one runs on a fresh Session of its HTTP
// connection's client, authenticated because the HTTP layer checked the token. Commands that
// only make sense on a connection (MULTI/EXEC/WATCH, AUTH, HELLO, QUIT, RESET) are refused;
// a transaction is POST /multi-exec. A blocking command does not block (as inside MULTI).
// Call on the worker thread that owns the HTTP connection. A request holding a Lua script
// runs whole on the script thread instead (RunRequest), as a RESP client's script does.
#include <functional>
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

namespace latch::rest {

struct RunOptions {
  ServerState& state;
  std::shared_ptr<ClientInfo> info;
  Encoding encoding = Encoding::kPlain;
  // Set for a request that a busy script kept off the script thread: its scripts are
  // answered BUSY (a transaction EXECABORT ... BUSY), as Dispatch answers them on a busy
  // server, and its other commands run as usual.
  bool scripts_refused = false;
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

// How a request's commands run: one command, a pipeline, or a transaction.
enum class RequestForm { kCommand, kPipeline, kTransaction };
// A request answered later: run on the HTTP connection's worker, it gives the answer.
using Finish = std::function<RunResult()>;

// Runs a request in `form` (kCommand: `commands` holds one) and returns its answer. A request
// holding a Lua script (RunsLuaScript) runs whole on the script thread instead, so that this
// worker answers its other clients meanwhile (BUSY past busy-reply-threshold, SCRIPT KILL,
// SHUTDOWN NOSAVE): then nullopt is returned and `later` is called once, from any thread,
// with what the caller runs on its worker for the answer (a request a busy script refused
// runs there, with scripts_refused). Whatever the script thread journaled for it is
// appended before `later` is called: the caller waits for journal::AppendedSeq.
std::optional<RunResult> RunRequest(const RunOptions& options, RequestForm form,
                                    std::vector<Args> commands, std::function<void(Finish)> later);

// The error for a command that needs per-connection state; nullopt when it may run.
std::optional<std::string> RefusedOverRest(std::string_view command);

}  // namespace latch::rest
