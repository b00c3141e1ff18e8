// EXEC of a queue that runs a Lua script: the whole transaction runs on the script thread, as
// a client's EVAL does (script_engine.h), so that its worker keeps answering its other
// clients while the script runs: BUSY past busy-reply-threshold, SCRIPT KILL, SHUTDOWN
// NOSAVE. On a worker, `MULTI / EVAL "while true do end" 0 / EXEC` left every client of that
// worker (with io-threads 1, of the server) without a reply until the script ended.
#include <spdlog/logger.h>

#include <new>
#include <string>
#include <utility>
#include <vector>

#include "commands/client_subscriptions.h"
#include "commands/command_record.h"
#include "commands/command_table.h"
#include "commands/errors.h"
#include "commands/transaction_commands.h"
#include "metrics/command_stats.h"
#include "scripting/script_engine.h"

namespace latch::scripting {

// One client's EXEC, owned by the script thread's queue, then by the reply on its way back.
// The client's whole Session travels with it: the queue and WATCHes, and whatever the queued
// commands read or change (SELECT, AUTH, HELLO, SUBSCRIBE, CLIENT SETNAME...). The parked
// connection keeps a stand-in meanwhile; the session goes back when the reply is written on
// the connection's thread. A session that never gets back (the client left, the server
// stopped) is cleaned up here, as Connection::Close would have: WATCHes and subscriptions.
struct ScriptEngine::ExecJob {
  explicit ExecJob(ServerState& s) : server(s) {}
  ~ExecJob() {
    if (home != nullptr) {
      ClearWatches(session, server.watches);
      pubsub::LeaveAll(session, server.pubsub);
    }
  }
  ExecJob(const ExecJob&) = delete;
  ExecJob& operator=(const ExecJob&) = delete;

  ServerState& server;
  std::vector<std::string> args;  // the EXEC as sent (its slowlog entry)
  int proto = 2;                  // the client's reply protocol at EXEC
  Session session;
  // The connection's session, to move `session` back into. Read only by the reply's writer,
  // which runs on the connection's thread while the connection is open (Connection::Unblock),
  // so the pointer is valid then. Null once the session is home.
  Session* home = nullptr;
  const CommandSpec* spec = nullptr;  // EXEC's: its commandstats and slowlog
  std::shared_ptr<BlockedClient> parked;
};

namespace {

// What the parked connection keeps while its session is away: enough for its own reads (the
// client's id and info, the protocol, the database), no queue, WATCH or subscription, so
// that nothing on the connection's thread touches what the script thread is using.
Session StandIn(const Session& away) {
  Session s;
  s.info = away.info;
  s.proto = away.proto;
  s.authenticated = away.authenticated;
  s.db = away.db;
  return s;
}

}  // namespace

void ScriptEngine::Exec(CommandContext& ctx) {
  auto job = std::make_shared<ExecJob>(server_);
  job->args.assign(ctx.args.begin(), ctx.args.end());
  job->proto = ctx.out.proto();
  job->spec = server_.commands != nullptr ? server_.commands->Find(ctx.arg(0)) : nullptr;
  job->parked = ctx.host->Block(0);
  // Redis shows nothing special for a client whose script runs: not a blocked client.
  ctx.session.info->blocked.store(false, std::memory_order_relaxed);
  job->session = std::move(ctx.session);
  ctx.session = StandIn(job->session);
  job->home = &ctx.session;
  ctx.record_later = true;  // RunExecJob records the call with the transaction's run time
  // A script busy meanwhile: refused as Dispatch refuses an EXEC then (EXECABORT naming
  // BUSY), the transaction discarded. May run on the script thread, inside the busy script's
  // hook (ScriptThread::RefuseQueued): it takes no shard.
  auto refuse = [this, job] {
    if (job->spec != nullptr && server_.command_stats) {
      server_.command_stats->Rejected(job->spec->stat_id);
    }
    std::string reply;
    protocol::ReplyWriter out(&reply, job->proto, &server_.stats.errors);
    std::vector<std::string_view> views(job->args.begin(), job->args.end());
    CommandContext ctx{views, out, job->session, server_, server_.clock->Now(), nullptr};
    AbortExec(ctx, errors::kBusyScript);
    SendExecReply(job, std::move(reply));
  };
  if (!thread_.Post([this, job] { RunExecJob(job); }, refuse)) refuse();
}

// The script thread: RunTransaction as the worker would run it, holding every shard; the
// queued scripts run inline here (origin kExec).
void ScriptEngine::RunExecJob(const std::shared_ptr<ExecJob>& job) {
  std::vector<std::string_view> views(job->args.begin(), job->args.end());
  std::string reply;
  protocol::ReplyWriter out(&reply, job->proto, &server_.stats.errors);
  CommandContext ctx{views, out, job->session, server_, server_.clock->Now(), nullptr};
  const CommandTimer timer(0, false);  // the transaction's own run, read here
  try {
    RunTransaction(ctx);
  } catch (const std::bad_alloc&) {
    // As Connection::Execute: the locks are released by unwinding, the partial reply
    // dropped, the client told -OOM and closed.
    reply.clear();
    out.Error(errors::kOom);
    job->session.close_after_reply = true;
    server_.log->warn("Out of memory running a transaction of client id={}: replied -OOM",
                      job->session.info->id);
  }
  if (job->spec != nullptr) RecordCommandCall(*job->spec, ctx, timer, 0);
  SendExecReply(job, std::move(reply));
}

// Hands the reply and the session back to the connection. A client gone meanwhile drops
// both (the job's destructor cleans the session up).
void ScriptEngine::SendExecReply(const std::shared_ptr<ExecJob>& job, std::string reply) {
  job->parked->TryComplete([job, reply = std::move(reply)](protocol::ReplyWriter& w) {
    Session& home = *job->home;
    home = std::move(job->session);
    job->home = nullptr;
    w.Raw(reply);
    w.set_proto(home.proto);  // a HELLO in the queue
    // Messages published to this client meanwhile wait in its mailbox, whose wake found the
    // stand-in (no subscriber) and drained nothing: drain them now, after the reply.
    if (home.subscriber && home.push_wake) home.push_wake();
  });
}

void ScriptEngine::RunOnScriptThread(ScriptThread::Task run, ScriptThread::Task refuse) {
  if (!thread_.Post(std::move(run), refuse)) refuse();
}

}  // namespace latch::scripting
