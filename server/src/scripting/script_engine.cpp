#include "scripting/script_engine.h"

#include "commands/arg_parse.h"
#include "commands/errors.h"
#include "commands/key_lock.h"
#include "scripting/native_runner.h"
#include "scripting/script_text.h"
#include "scripting/sha1.h"

namespace latch::scripting {
namespace {

constexpr std::string_view kNoScript = "NOSCRIPT No matching script. Please use EVAL.";

}  // namespace

ScriptEngine::ScriptEngine(ServerState& server)
    : server_(server), lua_(std::make_unique<LuaEngine>()) {}

ScriptEngine::~ScriptEngine() = default;

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
  RunLua(ctx, *script, keys, argv, read_only);
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
