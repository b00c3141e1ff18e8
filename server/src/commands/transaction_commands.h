#pragma once
#include <string_view>

#include "commands/context.h"

namespace latch {

// Drops the session's WATCHes (EXEC, DISCARD, UNWATCH, disconnect).
void ClearWatches(Session& s, WatchRegistry& registry);
// Leaves MULTI and drops the queue (EXEC, DISCARD, RESET).
void ResetMulti(Session& s);
// An EXEC refused before its queue runs (NOAUTH, wrong arity, BUSY, OOM, ...): as Redis 7.0,
// the transaction is discarded (queue and WATCHes dropped, even without MULTI) and the
// reply is EXECABORT naming the refusal. `error` is the refusal without its leading dash.
void AbortExec(CommandContext& ctx, std::string_view error);

// EXEC's work once its checks passed, on the calling thread: holding every shard, checks the
// WATCHes and runs the session's queue (the session leaves MULTI and drops its WATCHes).
void RunTransaction(CommandContext& ctx);
// True for the commands that run a Lua script: EVAL, EVALSHA and their _RO forms, any case.
// Lua runs only on the script thread, never on an io thread, which must stay free to answer
// its other clients (BUSY, SCRIPT KILL) while a script runs: a request holding one goes there.
bool RunsLuaScript(std::string_view command);
// EXEC of a queue that runs a Lua script, by a client that can park (script_commands.cpp,
// done by scripting::ScriptEngine::Exec): RunTransaction on the script thread.
void ExecOnScriptThread(CommandContext& ctx);

}  // namespace latch
