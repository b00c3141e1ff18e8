#include "scripting/script_engine.h"

#include <spdlog/logger.h>

#include <new>
#include <string>
#include <vector>

#include "commands/arg_parse.h"
#include "commands/command_record.h"
#include "commands/command_table.h"
#include "commands/errors.h"
#include "commands/key_lock.h"
#include "journal/server_hooks.h"
#include "metrics/command_stats.h"
#include "scripting/native_runner.h"
#include "scripting/script_text.h"
#include "scripting/sha1.h"

namespace latch::scripting {
namespace {

constexpr std::string_view kNoScript = "NOSCRIPT No matching script. Please use EVAL.";

}  // namespace

// One client's Lua run, owned by the script thread's queue: copies of everything the run
// reads from the connection, which goes on reading (and may close) meanwhile.
struct ScriptEngine::Job {
  std::vector<std::string> args;  // the EVAL's, owned
  std::size_t numkeys = 0;
  CachedScript script;            // copied: EVALSHA's FindLocal entry is the worker's
  bool read_only = false;
  int proto = 2;                  // the client's, for the script's reply
  Session session;                // db, ACL user, client info: a snapshot at EVAL
  const CommandSpec* spec = nullptr;  // EVAL/EVALSHA(_RO): its commandstats and slowlog
  std::shared_ptr<BlockedClient> parked;
};

ScriptEngine::ScriptEngine(ServerState& server)
    : server_(server), lua_(std::make_unique<LuaEngine>()), thread_(server.script_busy) {
  control_.on_busy = [this] { thread_.RefuseQueued(); };
}

ScriptEngine::~ScriptEngine() {
  KillForShutdown();
  thread_.Stop();
}

ScriptEngine& EngineFor(ServerState& server) {
  std::call_once(server.scripting_once,
                 [&] { server.scripting = std::make_shared<ScriptEngine>(server); });
  return *server.scripting;
}

std::shared_ptr<const CachedScript> ScriptEngine::AddScript(CommandContext& ctx,
                                                            std::string_view body) {
  std::string sha = Sha1Hex(body);
  if (auto found = cache_.Find(sha)) return found;
  NativeKind native = RecogniseScript(body, sha);
  if (native == NativeKind::kNone) {
    // Only a script that compiles enters the cache (as in Redis). Recognised library
    // scripts compile by construction and are compiled when they first need Lua.
    std::string error;
    if (!store::LockTimed(lua_mu_, GiveUpFlag(ctx))) {
      ctx.out.Error(errors::kBusyScript);
      return nullptr;
    }
    std::lock_guard lock(lua_mu_, std::adopt_lock);
    if (!lua_->Compile(sha, body, &error)) {
      ctx.out.Error(error);
      return nullptr;
    }
  }
  return cache_.Add(std::move(sha), std::string(body), native);
}

void ScriptEngine::Eval(CommandContext& ctx, bool by_sha, bool read_only) {
  ShaText sha;
  if (by_sha && !NormalizeSha(ctx.arg(1), &sha)) {
    ctx.out.Error(kNoScript);
    return;
  }
  std::int64_t numkeys = 0;
  if (!ParseInt64(ctx.arg(2), &numkeys)) {
    ctx.out.Error(errors::kNotInteger);
    return;
  }
  if (numkeys > static_cast<std::int64_t>(ctx.argc() - 3)) {
    ctx.out.Error("ERR Number of keys can't be greater than number of args");
    return;
  }
  if (numkeys < 0) {
    ctx.out.Error("ERR Number of keys can't be negative");
    return;
  }
  // EVALSHA: the calling thread's copy of the cache, no lock and no reference count.
  std::shared_ptr<const CachedScript> added;
  const CachedScript* script =
      by_sha ? cache_.FindLocal(ShaView(sha)) : (added = AddScript(ctx, ctx.arg(1))).get();
  if (script == nullptr) {
    if (by_sha) ctx.out.Error(kNoScript);
    return;  // AddScript replied the compile error
  }
  auto keys = ctx.args.subspan(3, static_cast<std::size_t>(numkeys));
  auto argv = ctx.args.subspan(3 + static_cast<std::size_t>(numkeys));
  // A user with ACL restrictions runs Lua, whose redis.call checks each command and key
  // with the user's rules (the native path runs no redis.call). Dispatch just refreshed
  // the flag.
  if (script->native != NativeKind::kNone && !read_only && ctx.session.acl.unrestricted &&
      native_enabled_.load(std::memory_order_relaxed) &&
      RunNative(script->native, ctx, keys, argv)) {
    native_runs_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (ctx.origin == CommandOrigin::kClient && ctx.host != nullptr) {
    return RunOffThread(ctx, *script, keys.size(), read_only);
  }
  RunLua(ctx, *script, keys, argv, read_only);  // EXEC's queue, or a caller that cannot park
}

void ScriptEngine::RunOffThread(CommandContext& ctx, const CachedScript& script,
                                std::size_t numkeys, bool read_only) {
  auto job = std::make_shared<Job>();
  job->args.assign(ctx.args.begin(), ctx.args.end());
  job->numkeys = numkeys;
  job->script = script;
  job->read_only = read_only;
  job->proto = ctx.out.proto();
  job->session.info = ctx.session.info;
  job->session.proto = ctx.session.proto;
  job->session.authenticated = ctx.session.authenticated;
  job->session.acl = ctx.session.acl;
  job->session.db = ctx.session.db;
  job->spec = server_.commands != nullptr ? server_.commands->Find(ctx.arg(0)) : nullptr;
  job->parked = ctx.host->Block(0);
  // Redis shows nothing special for a client whose script runs: not a blocked client.
  ctx.session.info->blocked.store(false, std::memory_order_relaxed);
  ctx.record_later = true;  // RunJob records the call with the script's run time
  auto refuse = [this, job] {
    if (job->spec != nullptr && server_.command_stats) {
      server_.command_stats->Rejected(job->spec->stat_id);  // as Dispatch's BUSY refusal
    }
    job->parked->TryComplete([](protocol::ReplyWriter& w) { w.Error(errors::kBusyScript); });
  };
  if (!thread_.Post([this, job] { RunJob(*job); }, refuse)) refuse();
}

// The script thread. The reply is written into a buffer of the job's and handed to the
// connection's worker; a client gone meanwhile (TryComplete false) just drops it.
void ScriptEngine::RunJob(Job& job) {
  std::vector<std::string_view> views(job.args.begin(), job.args.end());
  const std::span<const std::string_view> args(views);
  std::string reply;
  protocol::ReplyWriter out(&reply, job.proto, &server_.stats.errors);
  CommandContext ctx{args, out, job.session, server_, server_.clock->Now(), nullptr};
  const CommandTimer timer(0, false);  // the script's own run, read here
  try {
    RunLua(ctx, job.script, args.subspan(3, job.numkeys), args.subspan(3 + job.numkeys),
           job.read_only);
  } catch (const std::bad_alloc&) {
    // As Connection::Execute: the locks are released by unwinding, the partial reply dropped.
    reply.clear();
    out.Error(errors::kOom);
    server_.log->warn("Out of memory running a script of client id={}", job.session.info->id);
  }
  if (job.spec != nullptr) RecordCommandCall(*job.spec, ctx, timer, 0);
  // The reply waits for the script's records and any appended before them, as it did when
  // the client's thread asked the journal at delivery.
  job.parked->TryComplete([reply = std::move(reply)](protocol::ReplyWriter& w) { w.Raw(reply); },
                          journal::AppendedSeq({server_.persistence.get(), server_.reply_log}));
}

void ScriptEngine::RunLua(CommandContext& ctx, const CachedScript& script,
                          std::span<const std::string_view> keys,
                          std::span<const std::string_view> argv, bool read_only) {
  std::int64_t limit_ms;
  {
    std::lock_guard lock(server_.options_mu);
    limit_ms = server_.options.lua_time_limit;
  }
  // The keyspace frozen, then the interpreter; either wait gives up (BUSY) when another
  // script is past busy-reply-threshold.
  const std::atomic<bool>* give_up = GiveUpFlag(ctx);
  ShardSet all;
  if (!all.LockEveryDb(server_.dbs, give_up) || !store::LockTimed(lua_mu_, give_up)) {
    ctx.out.Error(errors::kBusyScript);
    return;
  }
  std::lock_guard lock(lua_mu_, std::adopt_lock);
  std::string error;
  if (!lua_->Compile(script.sha, script.body, &error)) {  // after a FLUSH, or a native one
    ctx.out.Error(error);
    return;
  }
  control_.clock = server_.clock.get();
  control_.start_mono_ms = server_.clock->MonoMs();
  control_.limit_ms = limit_ms;
  control_.busy = &server_.script_busy;
  control_.timed_out = false;
  control_.wrote.store(false, std::memory_order_relaxed);
  control_.kill_requested.store(shutting_down_.load(std::memory_order_relaxed),
                                std::memory_order_relaxed);
  control_.running.store(true, std::memory_order_release);
  lua_->Run(ctx, LuaScriptCall{script.sha, keys, argv, read_only}, control_);
  control_.running.store(false, std::memory_order_release);
  if (control_.timed_out) server_.script_busy.store(false, std::memory_order_relaxed);
  control_.kill_requested.store(shutting_down_.load(std::memory_order_relaxed),
                                std::memory_order_relaxed);
}

void ScriptEngine::ScriptLoad(CommandContext& ctx) {
  auto script = AddScript(ctx, ctx.arg(2));
  if (script != nullptr) ctx.out.Bulk(script->sha);
}

void ScriptEngine::ScriptExists(CommandContext& ctx) {
  ctx.out.ArrayHeader(ctx.argc() - 2);
  ShaText sha;
  for (std::size_t i = 2; i < ctx.argc(); ++i) {
    bool found = NormalizeSha(ctx.arg(i), &sha) && cache_.Find(ShaView(sha)) != nullptr;
    ctx.out.Integer(found ? 1 : 0);
  }
}

void ScriptEngine::ScriptFlush(CommandContext& ctx) {
  if (ctx.argc() > 3 ||
      (ctx.argc() == 3 && !EqualsNoCase(ctx.arg(2), "sync") &&
       !EqualsNoCase(ctx.arg(2), "async"))) {
    ctx.out.Error("ERR SCRIPT FLUSH only support SYNC|ASYNC option");
    return;
  }
  auto fresh = std::make_unique<LuaEngine>();
  {
    if (!store::LockTimed(lua_mu_, GiveUpFlag(ctx))) return ctx.out.Error(errors::kBusyScript);
    std::lock_guard lock(lua_mu_, std::adopt_lock);
    cache_.Clear();
    lua_.swap(fresh);
  }
  ctx.out.Ok();  // the old interpreter is closed here, outside the lock
}

void ScriptEngine::ScriptKill(CommandContext& ctx) {
  if (!control_.running.load(std::memory_order_acquire) ||
      !server_.script_busy.load(std::memory_order_relaxed)) {
    ctx.out.Error("NOTBUSY No scripts in execution right now.");
    return;
  }
  if (control_.wrote.load(std::memory_order_relaxed)) {
    ctx.out.Error(
        "UNKILLABLE Sorry the script already executed write commands against the dataset. "
        "You can either wait the script termination or kill the server in a hard way using "
        "the SHUTDOWN NOSAVE command.");
    return;
  }
  control_.kill_requested.store(true, std::memory_order_relaxed);
  ctx.out.Ok();
}

}  // namespace latch::scripting
