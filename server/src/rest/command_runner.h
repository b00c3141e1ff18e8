#pragma once
// Runs the commands of one REST request through CommandTable::Dispatch, exactly as a RESP
// connection runs them (same table, checks, errors and limits: the RESP reply is written by
// the same handlers, then read back and turned into JSON), and gives Upstash's status code and
// body. No HTTP here: rest_session.cpp owns that, and this file serves every request form.
//
// A request is stateless, as on Upstash: each one runs on a fresh Session of its HTTP
// connection's client, logged in as the ACL user its credentials named (rest_auth.h): the
// dispatcher checks that user's permissions as for a RESP client, and re-reads them when
// any ACL changes during the request. Commands that only make sense on a connection
// (MULTI/EXEC/WATCH, AUTH, HELLO, QUIT, RESET) are refused; a transaction is POST
// /multi-exec. A blocking command does not block (as inside MULTI).
//
// The answer is produced a step at a time (CommandJob::Next), so that the HTTP side writes
// it while it is produced and runs the next commands only as the client reads: a pipeline
// of GETs of a large value is never held whole. Call on the worker thread that owns the
// HTTP connection, except a step that runs a script (NextRunsScript).
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rest/json_args.h"
#include "rest/json_reply.h"

namespace latch {
class CommandCatalogue;
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

// The commands of one request and the JSON answer they make:
//   kSingle:      {"result": ...} with 200, or {"error": "..."} with 400.
//   kPipeline:    [{"result": ...} | {"error": "..."}, ...] with 200: one entry per command, in
//                 order; a failing command does not stop the others (not atomic, as Upstash).
//   kTransaction: MULTI, the commands, EXEC: the entries as for a pipeline, all applied
//                 atomically; a command refused while queuing discards the whole transaction
//                 (400, Redis's EXECABORT), as does MULTI refused to the user (NOPERM).
class CommandJob {
 public:
  enum class Form { kSingle, kPipeline, kTransaction };
  CommandJob(const RunOptions& options, Form form, std::vector<Args> commands);
  ~CommandJob();
  CommandJob(const CommandJob&) = delete;
  CommandJob& operator=(const CommandJob&) = delete;

  enum class Step {
    kMore,       // appended a part of the answer; call again
    kDone,       // appended the rest of the answer
    kOverLimit,  // a command's reply is larger than `budget`: nothing appended
    kClosed,     // the user was deleted meanwhile: close the connection without an answer,
                 // as Redis closes such a client
  };
  // Runs the next command (a transaction's MULTI...EXEC at once; its results are then
  // appended one per step) and appends its part of the answer to *out. `budget`: the most
  // bytes a command's reply may take before it is turned into JSON (client-output-buffer-
  // limit's room). Not to be called again after kDone, kOverLimit or kClosed.
  Step Next(std::string* out, std::size_t budget);
  // The HTTP status, known once the first Next() returned.
  int status() const { return status_; }

  // True when the next step runs a Lua script: a single or pipelined EVAL/EVALSHA (and _RO)
  // next, or a transaction holding one that has not run yet. The caller then calls Next()
  // on the script thread (ScriptEngine::RunOnScriptThread), where the script runs inline,
  // as a RESP client's EVAL and EXEC do: Lua never runs on an io thread, so a script that
  // never ends cannot leave that worker's clients (SCRIPT KILL's sender among them)
  // unanswered. The job is then touched by that thread only, until the step returns.
  bool NextRunsScript() const;
  // The script thread refused the next step (a script is busy): the next Next() answers
  // that script BUSY (a transaction: EXECABORT ... BUSY) without running it, on any thread.
  void RefuseNextScript() { refuse_script_ = true; }
  // True when one of the job's commands needs the Raft leader (commands/leader_session.h):
  // a follower relays such a request to the leader's REST endpoint (rest/leader_proxy.h).
  bool NeedsLeader(const CommandCatalogue& catalogue) const;

  class Runner;

 private:
  Step NextTransaction(std::string* out, std::size_t budget);

  std::unique_ptr<Runner> runner_;
  Form form_;
  Encoding encoding_;
  std::vector<Args> commands_;
  std::size_t next_ = 0;  // the next command, or (transaction) the next result
  int status_ = 200;
  bool refuse_script_ = false;
  struct Exec;  // a transaction's EXEC reply, appended one result per step
  std::unique_ptr<Exec> exec_;
};

// The error for a command that needs per-connection state; nullopt when it may run.
std::optional<std::string> RefusedOverRest(std::string_view command);

}  // namespace latch::rest
