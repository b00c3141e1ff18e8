#include "rest/command_runner.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "commands/arg_parse.h"
#include "commands/command_table.h"
#include "commands/context.h"
#include "commands/errors.h"
#include "commands/transaction_commands.h"
#include "scripting/script_engine.h"
#include "server_state.h"

namespace latch::rest {
namespace {

using protocol::Reply;

// One request's client: a fresh session, one reply buffer reused by every command.
class Runner {
 public:
  explicit Runner(const RunOptions& options) : options_(options), writer_(&out_, 2) {
    session_.info = options.info;
    session_.authenticated = true;
  }

  // Runs a command from the request (refused ones are answered here, not dispatched).
  Reply Run(const Args& args) {
    if (args.empty()) return Reply::Error("ERR empty command");
    if (auto refused = RefusedOverRest(args[0])) return Reply::Error(*refused);
    if (options_.scripts_refused && RunsLuaScript(args[0])) {
      return Reply::Error(std::string(errors::kBusyScript));
    }
    return Dispatch(args);
  }

  // Any command, MULTI and EXEC included (the transaction form runs those itself).
  Reply Dispatch(const Args& args) {
    out_.clear();
    views_.assign(args.begin(), args.end());
    // As a RESP connection: one full clock read for the request, then only the monotonic one.
    const TimeSnapshot now =
        first_ ? options_.state.clock->Now() : options_.state.clock->NowSameWallOffset();
    first_ = false;
    CommandContext ctx{views_, writer_, session_, options_.state, now, nullptr};
    options_.state.commands->Dispatch(ctx);
    return ReadReply();
  }

 private:
  // The one reply the handler wrote (handlers write exactly one; anything else is a bug
  // reported as an error rather than a malformed body). A successful SHUTDOWN writes none
  // (over RESP the connection just closes): it is answered OK while the server goes down.
  Reply ReadReply() {
    if (out_.empty()) return Reply::Simple("OK");
    protocol::ReplyReaderLimits limits;
    limits.max_bulk_len = std::numeric_limits<std::int64_t>::max();
    limits.max_depth = 64;
    protocol::ReplyReader reader(limits);
    reader.Feed(out_);
    Reply reply;
    if (reader.Next(&reply) != protocol::ReplyReader::Status::kReply || reader.buffered() != 0) {
      return Reply::Error("ERR the command's reply cannot be shown as JSON");
    }
    return reply;
  }

  const RunOptions& options_;
  Session session_;
  std::string out_;
  protocol::ReplyWriter writer_;
  std::vector<std::string_view> views_;
  bool first_ = true;
};

// {"result": ...} or {"error": ...}: one command's entry (or whole body).
void AppendEntry(const Reply& reply, Encoding encoding, std::string* out) {
  if (reply.is_error()) {
    out->append("{\"error\":");
    AppendJsonString(reply.str, out);
  } else {
    out->append("{\"result\":");
    AppendJsonValue(reply, encoding, true, out);
  }
  out->push_back('}');
}

}  // namespace

std::optional<std::string> RefusedOverRest(std::string_view command) {
  for (std::string_view tx : {"multi", "exec", "discard", "watch", "unwatch"}) {
    if (EqualsNoCase(command, tx)) {
      return "ERR " + std::string(tx) +
             " is not available over REST: POST the transaction's commands to /multi-exec";
    }
  }
  for (std::string_view conn : {"auth", "hello", "quit", "reset"}) {
    if (EqualsNoCase(command, conn)) {
      return "ERR " + std::string(conn) +
             " is not available over REST: every request stands alone and is authenticated "
             "by its token";
    }
  }
  return std::nullopt;
}

RunResult RunCommand(const RunOptions& options, const Args& args) {
  Runner runner(options);
  const Reply reply = runner.Run(args);
  RunResult result;
  result.status = reply.is_error() ? 400 : 200;
  AppendEntry(reply, options.encoding, &result.body);
  return result;
}

RunResult RunPipeline(const RunOptions& options, const std::vector<Args>& commands) {
  Runner runner(options);
  RunResult result;
  result.body.push_back('[');
  for (std::size_t i = 0; i < commands.size(); ++i) {
    if (i > 0) result.body.push_back(',');
    AppendEntry(runner.Run(commands[i]), options.encoding, &result.body);
  }
  result.body.push_back(']');
  return result;
}

RunResult RunTransaction(const RunOptions& options, const std::vector<Args>& commands) {
  // A refused command refuses the request before anything is queued.
  for (const Args& args : commands) {
    std::optional<std::string> refused =
        args.empty() ? std::optional<std::string>("ERR empty command") : RefusedOverRest(args[0]);
    if (refused) return {400, JsonError(*refused)};
  }
  if (options.scripts_refused) {  // as an EXEC sent while a script is busy
    return {400, JsonError("EXECABORT Transaction discarded because of: " +
                           std::string(errors::kBusyScript))};
  }
  Runner runner(options);
  runner.Dispatch({"MULTI"});
  for (const Args& args : commands) runner.Dispatch(args);  // QUEUED, or an error EXEC reports
  const Reply exec = runner.Dispatch({"EXEC"});
  if (exec.is_error()) return {400, JsonError(exec.str)};
  if (exec.type != protocol::ReplyType::kArray) {
    return {400, JsonError("EXECABORT Transaction discarded")};
  }
  RunResult result;
  result.body.push_back('[');
  for (std::size_t i = 0; i < exec.elements.size(); ++i) {
    if (i > 0) result.body.push_back(',');
    AppendEntry(exec.elements[i], options.encoding, &result.body);
  }
  result.body.push_back(']');
  return result;
}

namespace {

RunResult RunForm(const RunOptions& options, RequestForm form, const std::vector<Args>& commands) {
  switch (form) {
    case RequestForm::kCommand:
      return RunCommand(options, commands.front());
    case RequestForm::kPipeline:
      return RunPipeline(options, commands);
    case RequestForm::kTransaction:
      return RunTransaction(options, commands);
  }
  return {};
}

}  // namespace

std::optional<RunResult> RunRequest(const RunOptions& options, RequestForm form,
                                    std::vector<Args> commands, std::function<void(Finish)> later) {
  const bool lua = std::any_of(commands.begin(), commands.end(), [](const Args& args) {
    return !args.empty() && RunsLuaScript(args[0]);
  });
  if (!lua) return RunForm(options, form, commands);
  struct Request {
    RunOptions options;
    RequestForm form;
    std::vector<Args> commands;
    std::function<void(Finish)> later;
  };
  auto r = std::make_shared<Request>(Request{options, form, std::move(commands), std::move(later)});
  // On the script thread the scripts run inline (no connection to park), as EXEC's do.
  auto run = [r] {
    auto result = std::make_shared<RunResult>(RunForm(r->options, r->form, r->commands));
    r->later([result] { return std::move(*result); });
  };
  // Refused behind a busy script: possibly called inside that script's hook, so nothing runs
  // here; the request runs on its worker, its scripts answered BUSY.
  auto refuse = [r] {
    r->later([r] {
      r->options.scripts_refused = true;
      return RunForm(r->options, r->form, r->commands);
    });
  };
  scripting::EngineFor(options.state).RunOnScriptThread(std::move(run), std::move(refuse));
  return std::nullopt;
}

}  // namespace latch::rest
