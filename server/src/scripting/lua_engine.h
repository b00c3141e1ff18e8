#pragma once
// One Lua 5.1 interpreter in Redis 7.0's sandbox, holding the compiled scripts. Not
// thread-safe: the ScriptEngine serialises every use (scripts also hold AllShardsLock).
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "commands/context.h"
#include "scripting/run_control.h"

namespace latch::scripting {

struct LuaScriptCall {
  std::string_view sha;  // lowercase hex of the body
  std::span<const std::string_view> keys;
  std::span<const std::string_view> argv;
  bool read_only = false;  // EVAL_RO / EVALSHA_RO
};

class LuaEngine {
 public:
  LuaEngine();
  ~LuaEngine();
  LuaEngine(const LuaEngine&) = delete;
  LuaEngine& operator=(const LuaEngine&) = delete;

  // Compiles `body` as the script `sha` unless it is compiled already. On a syntax error
  // returns false with *error = "ERR Error compiling script (new function): ...".
  bool Compile(std::string_view sha, std::string_view body, std::string* error);
  bool IsCompiled(std::string_view sha);
  // Runs a compiled script and writes its reply (or error) to ctx.out. The caller holds
  // AllShardsLock; `control` is the engine's kill/busy state, already armed.
  void Run(CommandContext& ctx, const LuaScriptCall& call, RunControl& control);
  // Lua memory in bytes (INFO used_memory_lua).
  std::size_t memory_bytes();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace latch::scripting
