#include "scripting/lua_engine.h"

#include <spdlog/logger.h>

#include <functional>

#include "scripting/lua_bridge.h"

namespace latch::scripting {
namespace {

// Count hook period, in VM instructions (as Redis).
constexpr int kHookPeriod = 100000;

// Registry table: sha -> compiled function.
const char kScriptsKey = 0;

void PushScripts(lua_State* L) {
  lua_pushlightuserdata(L, const_cast<char*>(&kScriptsKey));
  lua_rawget(L, LUA_REGISTRYINDEX);
}

// Marks the run busy once it passes lua-time-limit, and aborts it after SCRIPT KILL.
void Hook(lua_State* L, lua_Debug*) {
  bool kill = false;
  {
    LuaRun* run = CurrentRun(L);
    if (run == nullptr || run->control == nullptr) return;
    RunControl& c = *run->control;
    if (!c.timed_out && c.clock->MonoMs() - c.start_mono_ms >= c.limit_ms) {
      c.timed_out = true;
      c.busy->store(true, std::memory_order_relaxed);
      if (c.on_busy) c.on_busy();
      run->caller->server.log->warn(
          "Slow script detected: still in execution after {} milliseconds. You can try "
          "killing the script using the SCRIPT KILL command.",
          c.clock->MonoMs() - c.start_mono_ms);
    }
    kill = c.kill_requested.load(std::memory_order_relaxed);
    if (kill) run->caller->server.log->warn("Lua script killed by user with SCRIPT KILL.");
  }
  if (kill) {
    // Fire on every line from now on, so that a pcall() cannot swallow the kill for good.
    lua_sethook(L, Hook, LUA_MASKLINE, 0);
    PushErrorTable(L, "Script killed by user with SCRIPT KILL...");
    lua_error(L);
  }
}

void SetArray(lua_State* L, const char* name, std::span<const std::string_view> values) {
  PushRealGlobals(L);
  lua_createtable(L, static_cast<int>(values.size()), 0);
  for (std::size_t i = 0; i < values.size(); ++i) {
    lua_pushlstring(L, values[i].data(), values[i].size());
    lua_rawseti(L, -2, static_cast<int>(i + 1));
  }
  lua_setfield(L, -2, name);
  lua_pop(L, 1);
}

}  // namespace

struct LuaEngine::Impl {
  lua_State* L = nullptr;
  LuaRun run;
};

LuaEngine::LuaEngine() : impl_(std::make_unique<Impl>()) {
  lua_State* L = luaL_newstate();
  if (L == nullptr) throw std::bad_alloc();
  impl_->L = L;
  OpenSandbox(L);
  lua_pushlightuserdata(L, const_cast<char*>(&kScriptsKey));
  lua_newtable(L);
  lua_rawset(L, LUA_REGISTRYINDEX);
  SetCurrentRun(L, &impl_->run);
  impl_->run.session.info = std::make_shared<ClientInfo>();
  impl_->run.session.info->name = "lua";
}

LuaEngine::~LuaEngine() { lua_close(impl_->L); }

bool LuaEngine::IsCompiled(std::string_view sha) {
  lua_State* L = impl_->L;
  PushScripts(L);
  lua_pushlstring(L, sha.data(), sha.size());
  lua_rawget(L, -2);
  bool found = lua_isfunction(L, -1);
  lua_pop(L, 2);
  return found;
}

bool LuaEngine::Compile(std::string_view sha, std::string_view body, std::string* error) {
  if (IsCompiled(sha)) return true;
  lua_State* L = impl_->L;
  if (luaL_loadbuffer(L, body.data(), body.size(), "@user_script") != 0) {
    const char* msg = lua_tostring(L, -1);
    *error = "ERR Error compiling script (new function): ";
    error->append(msg ? msg : "");
    lua_pop(L, 1);
    return false;
  }
  PushScripts(L);
  lua_pushlstring(L, sha.data(), sha.size());
  lua_pushvalue(L, -3);
  lua_rawset(L, -3);
  lua_pop(L, 2);
  return true;
}

void LuaEngine::Run(CommandContext& ctx, const LuaScriptCall& call, RunControl& control) {
  lua_State* L = impl_->L;
  LuaRun& run = impl_->run;
  int top = lua_gettop(L);
  SetArray(L, "KEYS", call.keys);
  SetArray(L, "ARGV", call.argv);
  PushErrorHandler(L);
  int handler = lua_gettop(L);
  PushScripts(L);
  lua_pushlstring(L, call.sha.data(), call.sha.size());
  lua_rawget(L, -2);
  lua_remove(L, -2);

  run.caller = &ctx;
  run.session.db = ctx.session.db;  // the caller's database; the script's SELECT moves only its own
  run.read_only = call.read_only;
  run.resp = 2;
  run.control = &control;
  lua_sethook(L, Hook, LUA_MASKCOUNT, kHookPeriod);
  int status = lua_pcall(L, 0, 1, handler);
  lua_sethook(L, nullptr, 0, 0);
  if (status == 0) {
    WriteLuaValue(L, -1, ctx.out, run.resp);
  } else {
    const std::string text = RaisedErrorText(L, -1, call.sha);
    if (lua_istable(L, -1) && ErrorCounted(L, -1)) {
      ctx.out.ErrorAlreadyCounted(text);  // a redis.call error, counted when it was written
    } else {
      ctx.out.Error(text);
    }
  }
  run.caller = nullptr;
  run.control = nullptr;
  run.scratch.clear();
  if (run.scratch.capacity() > 64 * 1024) run.scratch.shrink_to_fit();
  lua_settop(L, top);
}

std::size_t LuaEngine::memory_bytes() {
  lua_State* L = impl_->L;
  return static_cast<std::size_t>(lua_gc(L, LUA_GCCOUNT, 0)) * 1024 +
         static_cast<std::size_t>(lua_gc(L, LUA_GCCOUNTB, 0));
}

}  // namespace latch::scripting
