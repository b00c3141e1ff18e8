#pragma once
// The script engine as the command handlers see it: EVAL*, SCRIPT *, an EXEC whose queue
// holds a script, and SHUTDOWN's kill. Owned here so that commands/ depends on no
// implementation of it: scripting::ScriptEngine is the one, and the server registers how to
// find it (CommandTable::SetScriptHost, state_wiring.cpp), as it registers the Interceptor.
namespace latch {

struct CommandContext;

class ScriptHost {
 public:
  // ctx.args: EVAL script numkeys key... arg... (or the SHA for by_sha).
  virtual void Eval(CommandContext& ctx, bool by_sha, bool read_only) = 0;
  virtual void ScriptLoad(CommandContext& ctx) = 0;
  virtual void ScriptExists(CommandContext& ctx) = 0;
  virtual void ScriptFlush(CommandContext& ctx) = 0;
  virtual void ScriptKill(CommandContext& ctx) = 0;
  // EXEC of a queue holding a Lua script, its checks done (scripting/script_engine.h).
  virtual void Exec(CommandContext& ctx) = 0;
  // SHUTDOWN NOSAVE past a busy script: stops it, written or not, and every later one.
  virtual void KillForShutdown() = 0;

 protected:
  ~ScriptHost() = default;
};

// The server's script engine (created on first use), through the host that the server
// registered on ctx.server.commands. Defined in script_commands.cpp.
ScriptHost& ScriptsFor(CommandContext& ctx);

}  // namespace latch
