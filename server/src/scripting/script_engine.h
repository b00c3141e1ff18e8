#pragma once
// EVAL, EVALSHA (and their _RO forms) and SCRIPT: the server-wide script cache, the Lua
// interpreter and the native path for known library lock scripts.
//
// Concurrency:
// - A Lua run holds every shard for its whole run (the keyspace is frozen, as in Redis),
//   then lua_mu_ (the interpreter). SCRIPT LOAD/FLUSH take lua_mu_ alone. lua_mu_ is always
//   the innermost lock, and scripts cannot call SCRIPT or EVAL, so there is no deadlock.
// - A recognised library script runs natively, locking only its keys' shards.
// - A script past lua-time-limit (busy-reply-threshold) sets ServerState::script_busy:
//   other clients get BUSY, including those already waiting for a shard or for lua_mu_
//   (every such wait gives up on the flag), and SCRIPT KILL (allowed while busy) stops it
//   unless it has written. A client served by the same worker thread as the running script
//   waits until the script ends: that thread is busy running it (Redis, single-threaded,
//   makes every client wait).
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>

#include "commands/context.h"
#include "scripting/lua_engine.h"
#include "scripting/run_control.h"
#include "scripting/script_cache.h"

namespace latch::scripting {

class ScriptEngine {
 public:
  explicit ScriptEngine(ServerState& server);
  ~ScriptEngine();

  // ctx.args: EVAL script numkeys key... arg... (or the SHA for by_sha).
  void Eval(CommandContext& ctx, bool by_sha, bool read_only);
  void ScriptLoad(CommandContext& ctx);
  void ScriptExists(CommandContext& ctx);
  void ScriptFlush(CommandContext& ctx);
  void ScriptKill(CommandContext& ctx);
  // SHUTDOWN NOSAVE and SIGTERM: stops a running script even if it has written, and every
  // script started from now on at its first hook (so a shutdown cannot be outrun by a
  // script that starts just after it).
  void KillForShutdown() {
    shutting_down_.store(true, std::memory_order_relaxed);
    control_.kill_requested.store(true, std::memory_order_relaxed);
  }
  // A server started again after a stop runs scripts again.
  void ResetShutdown() { shutting_down_.store(false, std::memory_order_relaxed); }

  // Tests: with the native path off every script runs in Lua (differential tests).
  void set_native_enabled(bool on) { native_enabled_.store(on, std::memory_order_relaxed); }
  std::size_t cached_scripts() const { return cache_.size(); }
  // Scripts answered by the native path (tests check that it is taken).
  std::uint64_t native_runs() const { return native_runs_.load(std::memory_order_relaxed); }

 private:
  // Compiles and caches a body; replies the compile error and returns null on failure.
  std::shared_ptr<const CachedScript> AddScript(CommandContext& ctx, std::string_view body);
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
};

// The server's engine, created on first use.
ScriptEngine& EngineFor(ServerState& server);

}  // namespace latch::scripting
