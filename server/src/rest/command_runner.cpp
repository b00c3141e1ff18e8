#include "rest/command_runner.h"

#include <algorithm>
#include <limits>
#include <mutex>
#include <utility>

#include "acl/registry.h"
#include "acl/user.h"
#include "commands/arg_parse.h"
#include "commands/command_table.h"
#include "commands/context.h"
#include "commands/errors.h"
#include "commands/leader_session.h"
#include "commands/transaction_commands.h"
#include "server_state.h"

namespace latch::rest {

using protocol::Reply;

// One request's client: a fresh session logged in as the request's user, one reply buffer
// reused by every command. A command's RESP reply stays in out_ until Take() reads it.
class CommandJob::Runner {
 public:
  explicit Runner(const RunOptions& options) : options_(options), writer_(&out_, 2) {
    session_.info = options.info;
    session_.authenticated = true;
    acl::SessionAcl& a = session_.acl;
    a.name = options.user->name;
    a.generation = options.state.acl->generation();
    a.unrestricted = options.user->unrestricted;
    a.user = options.user;
    std::lock_guard lock(options.state.clients.mu);  // CLIENT LIST's user=
    if (options.info->user != a.name) options.info->user = a.name;
  }

  // A command from the request: refused ones are answered here, not dispatched.
  void Run(const Args& args) {
    if (args.empty()) return Refuse("ERR empty command");
    if (auto refused = RefusedOverRest(args[0])) return Refuse(*refused);
    Dispatch(args);
  }

  // Any command, MULTI and EXEC included (the transaction form runs those itself).
  void Dispatch(const Args& args) {
    out_.clear();
    views_.assign(args.begin(), args.end());
    // As a RESP connection: one full clock read for the request, then only the monotonic one.
    const TimeSnapshot now =
        first_ ? options_.state.clock->Now() : options_.state.clock->NowSameWallOffset();
    first_ = false;
    CommandContext ctx{views_, writer_, session_, options_.state, now, nullptr};
    options_.state.commands->Dispatch(ctx);
  }

  void Refuse(std::string_view error) {
    out_.clear();
    writer_.Error(error);
  }

  std::size_t reply_bytes() const { return out_.size(); }
  // The dispatcher found the session's user deleted (commands/acl_gate.h): no reply was written.
  bool user_deleted() const {
    return out_.empty() && session_.close_after_reply && session_.acl.user == nullptr;
  }

  // The one reply the handler wrote (handlers write exactly one; anything else is a bug
  // reported as an error rather than a malformed body). A successful SHUTDOWN writes none
  // (over RESP the connection just closes): it is answered OK while the server goes down.
  Reply Take() {
    if (out_.empty()) return Reply::Simple("OK");
    protocol::ReplyReaderLimits limits;
    limits.max_bulk_len = std::numeric_limits<std::int64_t>::max();
    limits.max_depth = 64;
    protocol::ReplyReader reader(limits);
    reader.Feed(out_);
    out_.clear();
    Reply reply;
    if (reader.Next(&reply) != protocol::ReplyReader::Status::kReply || reader.buffered() != 0) {
      return Reply::Error("ERR the command's reply cannot be shown as JSON");
    }
    return reply;
  }

 private:
  const RunOptions options_;  // a copy: the job outlives the route that made it
  Session session_;
  std::string out_;
  protocol::ReplyWriter writer_;
  std::vector<std::string_view> views_;
  bool first_ = true;
};

namespace {

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

struct CommandJob::Exec {
  Reply reply;  // an array; each result is released once appended
};

CommandJob::CommandJob(const RunOptions& options, Form form, std::vector<Args> commands)
    : runner_(std::make_unique<Runner>(options)),
      form_(form),
      encoding_(options.encoding),
      commands_(std::move(commands)) {}

CommandJob::~CommandJob() = default;

CommandJob::Step CommandJob::Next(std::string* out, std::size_t budget) {
  if (form_ == Form::kTransaction) return NextTransaction(out, budget);
  const Args& args = commands_[next_];
  if (std::exchange(refuse_script_, false) && !args.empty() && RunsLuaScript(args[0])) {
    runner_->Refuse(errors::kBusyScript);
  } else {
    runner_->Run(args);
  }
  if (runner_->user_deleted()) return Step::kClosed;
  if (runner_->reply_bytes() >= budget) return Step::kOverLimit;
  const Reply reply = runner_->Take();
  if (form_ == Form::kSingle) {
    status_ = reply.is_error() ? 400 : 200;
    AppendEntry(reply, encoding_, out);
    return Step::kDone;
  }
  out->push_back(next_ == 0 ? '[' : ',');
  AppendEntry(reply, encoding_, out);
  if (++next_ < commands_.size()) return Step::kMore;
  out->push_back(']');
  return Step::kDone;
}

CommandJob::Step CommandJob::NextTransaction(std::string* out, std::size_t budget) {
  const auto fail = [&](std::string_view error) {
    status_ = 400;
    out->append(JsonError(error));
    return Step::kDone;
  };
  if (exec_ == nullptr) {
    // A refused command refuses the request before anything is queued.
    for (const Args& args : commands_) {
      std::optional<std::string> refused =
          args.empty() ? std::optional<std::string>("ERR empty command") : RefusedOverRest(args[0]);
      if (refused) return fail(*refused);
    }
    // As an EXEC behind a busy script (AbortExec): discarded before anything is queued.
    if (std::exchange(refuse_script_, false)) {
      return fail("EXECABORT Transaction discarded because of: " +
                  std::string(errors::kBusyScript));
    }
    // MULTI refused (NOPERM): nothing may run, since the commands would not be queued.
    runner_->Dispatch({"MULTI"});
    if (runner_->user_deleted()) return Step::kClosed;
    if (const Reply multi = runner_->Take(); multi.is_error()) return fail(multi.str);
    for (const Args& args : commands_) {  // QUEUED, or an error EXEC reports
      runner_->Dispatch(args);
      if (runner_->user_deleted()) return Step::kClosed;
    }
    runner_->Dispatch({"EXEC"});
    if (runner_->user_deleted()) return Step::kClosed;
    if (runner_->reply_bytes() >= budget) return Step::kOverLimit;
    Reply exec = runner_->Take();
    if (exec.is_error()) return fail(exec.str);
    if (exec.type != protocol::ReplyType::kArray) return fail("EXECABORT Transaction discarded");
    exec_ = std::make_unique<Exec>(Exec{std::move(exec)});
    out->push_back('[');
  } else {
    out->push_back(',');
  }
  std::vector<Reply>& results = exec_->reply.elements;
  if (next_ < results.size()) {
    AppendEntry(results[next_], encoding_, out);
    results[next_] = Reply();  // its memory goes as its JSON is made
  }
  if (++next_ < results.size()) return Step::kMore;
  out->push_back(']');
  return Step::kDone;
}

bool CommandJob::NeedsLeader(const CommandCatalogue& catalogue) const {
  std::vector<std::string_view> views;
  for (const Args& args : commands_) {
    views.assign(args.begin(), args.end());
    if (RunsOnLeader(catalogue, views)) return true;
  }
  return false;
}

bool CommandJob::NextRunsScript() const {
  if (refuse_script_) return false;  // answered BUSY where the caller is
  const auto lua = [](const Args& args) { return !args.empty() && RunsLuaScript(args[0]); };
  if (form_ != Form::kTransaction) return next_ < commands_.size() && lua(commands_[next_]);
  return exec_ == nullptr && std::any_of(commands_.begin(), commands_.end(), lua);
}

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

}  // namespace latch::rest
