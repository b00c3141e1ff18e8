#pragma once
// EVAL, EVALSHA (and their _RO forms) and SCRIPT: the server-wide script cache, the Lua
// interpreter and the native path for known library lock scripts.
//
// Concurrency:
// - A client's Lua run (EVAL/EVALSHA and the _RO forms) does not run on its io thread: the
//   connection parks (BlockHost::Block, as LOCK.ACQUIRE ... WAIT does) and the script
//   thread (ScriptThread) runs it into a reply buffer of its own, holding every shard (the
//   keyspace is frozen, as in Redis), then lua_mu_ (the interpreter); the reply goes back to
//   the connection's worker (BlockedClient::TryComplete), which writes it and resumes the
//   client's pipeline in order. So the io threads stay free while a script runs: every
//   client, the script's own worker's included, is answered (BUSY past the threshold,
//   SCRIPT KILL, SHUTDOWN NOSAVE), as by Redis's one thread between hook calls. The script
//   runs with a copy of the caller's session (db, ACL user, protocol); a client that
//   disconnects meanwhile has its reply dropped, the script runs to its end.
// - An EXEC whose queue holds a Lua script runs whole on the script thread the same way
//   (Exec, script_exec.cpp): the connection parks and its session travels with the
//   transaction; the queued scripts then run inline there. A REST request's step that runs
//   a script (CommandJob::NextRunsScript) goes to the script thread too, through
//   RunOnScriptThread (rest/rest_answer.cpp). So Lua never runs on an io thread. Inline on the calling thread: callers that cannot park
//   (null host: the script thread's own EXEC and REST runs, the test kit).
// - SCRIPT LOAD/FLUSH take lua_mu_ alone. lua_mu_ is always the innermost lock, and scripts
//   cannot call SCRIPT or EVAL, so there is no deadlock.
// - A recognised library script runs natively, inline on the io thread (no hop: the lock
//   libraries' hot path), locking only its keys' shards.
// - A script past lua-time-limit (busy-reply-threshold) sets ServerState::script_busy:
//   other clients get BUSY, including those already waiting for a shard or for lua_mu_
//   (every such wait gives up on the flag) and the scripts queued behind it, and SCRIPT
//   KILL (allowed while busy) stops it unless it has written.
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "commands/context.h"
#include "commands/script_host.h"
#include "scripting/lua_engine.h"
#include "scripting/run_control.h"
#include "scripting/script_cache.h"
#include "scripting/script_thread.h"

namespace latch::scripting {

class ScriptEngine final : public ScriptHost {
 public:
  explicit ScriptEngine(ServerState& server);
  ~ScriptEngine();

  // ctx.args: EVAL script numkeys key... arg... (or the SHA for by_sha).
  void Eval(CommandContext& ctx, bool by_sha, bool read_only) override;
  void ScriptLoad(CommandContext& ctx) override;
  void ScriptExists(CommandContext& ctx) override;
  void ScriptFlush(CommandContext& ctx) override;
  void ScriptKill(CommandContext& ctx) override;
  // EXEC of a queue holding a Lua script, by a client that can park (ctx.host), its checks
  // done: parks the client and runs the transaction on the script thread (RunTransaction).
  // Answered EXECABORT ... BUSY instead when a script is busy before it starts.
  void Exec(CommandContext& ctx) override;
  // Any thread: queues `run` on the script thread, or calls `refuse` (at once, or later from
  // the thread that saw a script go busy while `run` waited) as the script thread refuses
  // work behind a busy script. `refuse` must not run commands (it may be called inside the
  // busy script's hook): it hands the refusal to the caller's own thread.
  void RunOnScriptThread(ScriptThread::Task run, ScriptThread::Task refuse);
  // SHUTDOWN NOSAVE and SIGTERM: stops a running script even if it has written, and every
  // script started from now on at its first hook (so a shutdown cannot be outrun by a
  // script that starts just after it).
  void KillForShutdown() override {
    shutting_down_.store(true, std::memory_order_relaxed);
    control_.kill_requested.store(true, std::memory_order_relaxed);
  }
  // A server started again after a stop runs scripts again.
  void ResetShutdown() { shutting_down_.store(false, std::memory_order_relaxed); }
  // Server stop, after KillForShutdown and once the workers are joined (a script's reply is
  // posted to its worker's io_context, which must outlive the script thread): joins the
  // script thread. The next script starts it again.
  void StopThread() { thread_.Stop(); }

  // Tests: with the native path off every script runs in Lua (differential tests).
  void set_native_enabled(bool on) { native_enabled_.store(on, std::memory_order_relaxed); }
  std::size_t cached_scripts() const { return cache_.size(); }
  // Scripts answered by the native path (tests check that it is taken).
  std::uint64_t native_runs() const { return native_runs_.load(std::memory_order_relaxed); }

 private:
  // Compiles and caches a body; replies the compile error and returns null on failure.
  std::shared_ptr<const CachedScript> AddScript(CommandContext& ctx, std::string_view body);
  // A client's Lua run: parks the client and queues the run on the script thread.
  struct Job;
  void RunOffThread(CommandContext& ctx, const CachedScript& script, std::size_t numkeys,
                    bool read_only);
  void RunJob(Job& job);
  struct ExecJob;
  void RunExecJob(const std::shared_ptr<ExecJob>& job);
  void SendExecReply(const std::shared_ptr<ExecJob>& job, std::string reply);
  void RunLua(CommandContext& ctx, const CachedScript& script,
              std::span<const std::string_view> keys, std::span<const std::string_view> argv,
              bool read_only);

  ServerState& server_;
  ScriptCache cache_;
  std::timed_mutex lua_mu_;  // timed: waits give up when a script goes busy
  std::unique_ptr<LuaEngine> lua_;  // guarded by lua_mu_; replaced by SCRIPT FLUSH
  RunControl control_;
  std::atomic<bool> shutting_down_{false};
  std::atomic<bool> native_enabled_{true};
  std::atomic<std::uint64_t> native_runs_{0};
  ScriptThread thread_;  // last: joined before the state above goes
};

// The server's engine, created on first use.
ScriptEngine& EngineFor(ServerState& server);

}  // namespace latch::scripting
