// The `redis` table scripts see: call, pcall, error_reply, status_reply, sha1hex, log,
// setresp, the no-op debugger/replication helpers of Redis 7.0 and its constants.
#include <spdlog/logger.h>

#include <cstdio>
#include <string>
#include <vector>

#include "commands/acl_gate.h"
#include "commands/command_table.h"
#include "commands/errors.h"
#include "scripting/lua_bridge.h"
#include "scripting/sha1.h"

namespace latch::scripting {
namespace {

// Formats a Lua number argument of redis.call the way Redis does: the integer form when
// the value is integral (and fits a long long), else %.17g.
std::string NumberArgument(lua_Number n) {
  char buf[64];
  if (n >= -9223372036854775808.0 && n < 9223372036854775808.0 &&
      static_cast<lua_Number>(static_cast<long long>(n)) == n) {
    std::snprintf(buf, sizeof(buf), "%lld", static_cast<long long>(n));
  } else {
    std::snprintf(buf, sizeof(buf), "%.17g", static_cast<double>(n));
  }
  return buf;
}

// Marks the error table on top of the stack as counted already (Redis's field name, which
// scripts can see too): the script's error reply that passes it on is not counted again.
void MarkCounted(lua_State* L) {
  lua_pushboolean(L, 1);
  lua_setfield(L, -2, kErrorCountedField);
}

// A command refused before it ran (unknown, arity, not allowed, OOM): an error reply of
// that command as far as the stats go, counted here whether or not the script passes it on.
void PushRefusal(lua_State* L, CommandContext& caller, std::string_view error) {
  if (protocol::ErrorObserver* errors = caller.out.error_observer()) {
    errors->OnErrorReply(error.starts_with('-') ? std::string(error.substr(1))
                                                : "ERR " + std::string(error));
  }
  PushErrorTable(L, error);
  MarkCounted(L);
}

// Runs one command for redis.call/pcall. Pushes the converted reply, or an error table;
// returns true when it pushed an error table (the caller raises it for redis.call).
bool RunCommand(lua_State* L, LuaRun& run) {
  int argc = lua_gettop(L);
  if (argc == 0) {
    PushErrorTable(L, "Please specify at least one argument for this redis lib call");
    return true;
  }
  std::vector<std::string> args;
  args.reserve(static_cast<std::size_t>(argc));
  for (int j = 1; j <= argc; ++j) {
    if (lua_type(L, j) == LUA_TNUMBER) {
      args.push_back(NumberArgument(lua_tonumber(L, j)));
    } else if (lua_type(L, j) == LUA_TSTRING) {
      std::size_t len = 0;
      const char* s = lua_tolstring(L, j, &len);
      args.emplace_back(s, len);
    } else {
      PushErrorTable(L, "Lua redis lib command arguments must be strings or integers");
      return true;
    }
  }
  CommandContext& caller = *run.caller;
  const CommandTable& table = *caller.server.commands;
  const CommandSpec* spec = table.FindCommand(args);
  if (spec == nullptr) {
    PushRefusal(L, caller, "Unknown Redis command called from script");
    return true;
  }
  if ((spec->arity > 0 && static_cast<std::size_t>(spec->arity) != args.size()) ||
      (spec->arity < 0 && args.size() < static_cast<std::size_t>(-spec->arity))) {
    PushRefusal(L, caller, "Wrong number of args calling Redis command from script");
    return true;
  }
  if (spec->flags & kCmdNoScript) {
    PushRefusal(L, caller, "This Redis command is not allowed from script");
    return true;
  }
  std::vector<std::string_view> views(args.begin(), args.end());
  if (std::string_view denied = acl::ScriptDenial(caller, *spec, views); !denied.empty()) {
    PushRefusal(L, caller, denied);
    return true;
  }
  if (spec->flags & kCmdWrite) {
    if (run.read_only) {
      PushRefusal(L, caller, "Write commands are not allowed from read-only scripts.");
      return true;
    }
    // As Redis: over maxmemory, a script's first write may not be one that grows memory;
    // once it has written, it runs to the end (stopping halfway would leave half a change).
    if ((spec->flags & kCmdDenyOom) && !run.control->wrote.load(std::memory_order_relaxed) &&
        caller.server.OverMaxmemory()) {
      PushRefusal(L, caller, "-" + std::string(errors::kOom));
      return true;
    }
    run.control->wrote.store(true, std::memory_order_relaxed);
  }
  run.scratch.clear();
  run.session.proto = run.resp;
  // The command's own error reply is counted as it is written, as for a client's command.
  protocol::ReplyWriter writer(&run.scratch, run.resp, caller.out.error_observer());
  // Same time snapshot as the script: keys do not expire while it runs. No BlockHost:
  // nothing blocks inside a script.
  CommandContext nested{views, writer, run.session, caller.server, caller.now, nullptr,
                         CommandOrigin::kScript};
  table.Dispatch(nested);
  protocol::ReplyReader reader;
  reader.Feed(run.scratch);
  protocol::Reply reply;
  if (reader.Next(&reply) != protocol::ReplyReader::Status::kReply) {
    PushErrorTable(L, "-ERR internal error: unreadable reply from " + args[0]);
    return true;
  }
  PushReply(L, reply, run.resp);
  if (reply.is_error()) MarkCounted(L);
  return reply.is_error();
}

int GenericCall(lua_State* L, bool raise) {
  bool failed;
  {
    LuaRun* run = CurrentRun(L);
    if (run == nullptr || run->caller == nullptr) {
      PushErrorTable(L, "redis.call() is only available while a script runs");
      failed = true;
    } else {
      failed = RunCommand(L, *run);
    }
  }
  if (failed && raise) return lua_error(L);
  return 1;
}

int Call(lua_State* L) { return GenericCall(L, true); }
int PCall(lua_State* L) { return GenericCall(L, false); }

int ErrorReply(lua_State* L) {
  if (lua_gettop(L) != 1 || lua_type(L, 1) != LUA_TSTRING) {
    PushErrorTable(L, "wrong number or type of arguments");
    return 1;
  }
  {
    std::size_t len = 0;
    const char* s = lua_tolstring(L, 1, &len);
    std::string err(s, len);
    if (err.empty() || err[0] != '-') err.insert(err.begin(), '-');
    PushErrorTable(L, err);
  }
  return 1;
}

int StatusReply(lua_State* L) {
  if (lua_gettop(L) != 1 || lua_type(L, 1) != LUA_TSTRING) {
    PushErrorTable(L, "wrong number or type of arguments");
    return 1;
  }
  lua_newtable(L);
  lua_pushvalue(L, 1);
  lua_setfield(L, -2, "ok");
  return 1;
}

int Sha1HexFn(lua_State* L) {
  if (lua_gettop(L) != 1) {
    PushErrorTable(L, "wrong number of arguments");
    return lua_error(L);
  }
  {
    std::size_t len = 0;
    const char* s = lua_tolstring(L, 1, &len);
    std::string hex = Sha1Hex(s ? std::string_view(s, len) : std::string_view());
    lua_pushlstring(L, hex.data(), hex.size());
  }
  return 1;
}

// Redis's levels: 0 debug, 1 verbose, 2 notice, 3 warning.
int Log(lua_State* L) {
  int argc = lua_gettop(L);
  const char* error = nullptr;
  if (argc < 2) {
    error = "redis.log() requires two arguments or more.";
  } else if (!lua_isnumber(L, 1)) {
    error = "First argument must be a number (log level).";
  } else if (lua_tonumber(L, 1) < 0 || lua_tonumber(L, 1) > 3) {
    error = "Invalid debug level.";
  }
  if (error != nullptr) {
    PushErrorTable(L, error);
    return lua_error(L);
  }
  {
    int level = static_cast<int>(lua_tonumber(L, 1));
    std::string msg;
    for (int j = 2; j <= argc; ++j) {
      std::size_t len = 0;
      const char* s = lua_tolstring(L, j, &len);
      if (s == nullptr) continue;
      if (j != 2) msg.push_back(' ');
      msg.append(s, len);
    }
    static constexpr spdlog::level::level_enum kLevels[] = {
        spdlog::level::debug, spdlog::level::debug, spdlog::level::info, spdlog::level::warn};
    CurrentRun(L)->caller->server.log->log(kLevels[level], "{}", msg);
  }
  return 0;
}

int SetResp(lua_State* L) {
  const char* error = nullptr;
  LuaRun* run = CurrentRun(L);
  if (lua_gettop(L) != 1) {
    error = "redis.setresp() requires one argument.";
  } else {
    int resp = static_cast<int>(lua_tonumber(L, 1));
    if (resp != 2 && resp != 3) {
      error = "RESP version must be 2 or 3.";
    } else if (run != nullptr) {
      run->resp = resp;
    }
  }
  if (error != nullptr) {
    PushErrorTable(L, error);
    return lua_error(L);
  }
  return 0;
}

int SetRepl(lua_State* L) {
  const char* error = nullptr;
  if (lua_gettop(L) != 1) {
    error = "redis.set_repl() requires one argument.";
  } else {
    int flags = static_cast<int>(lua_tonumber(L, 1));
    if (flags < 0 || flags > 3) {
      error = "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.";
    }
  }
  if (error != nullptr) {
    PushErrorTable(L, error);
    return lua_error(L);
  }
  return 0;  // no replication here: accepted and ignored
}

int AclCheckCmd(lua_State* L) {
  const char* error = nullptr;
  LuaRun* run = CurrentRun(L);
  if (lua_gettop(L) == 0) {
    error = "Please specify at least one argument for this redis lib call";
  } else if (run == nullptr || run->caller == nullptr || lua_type(L, 1) != LUA_TSTRING ||
             run->caller->server.commands->Find(lua_tostring(L, 1)) == nullptr) {
    error = "Invalid command passed to redis.acl_check_cmd()";
  }
  if (error != nullptr) {
    PushErrorTable(L, error);
    return lua_error(L);
  }
  lua_pushboolean(L, 1);  // no ACLs: the default user may run everything
  return 1;
}

int ReturnTrue(lua_State* L) {
  lua_pushboolean(L, 1);
  return 1;
}
int ReturnFalse(lua_State* L) {
  lua_pushboolean(L, 0);
  return 1;
}
int ReturnNothing(lua_State*) { return 0; }

}  // namespace

void OpenRedisLib(lua_State* L) {
  lua_newtable(L);
  const luaL_Reg fns[] = {
      {"call", Call},
      {"pcall", PCall},
      {"error_reply", ErrorReply},
      {"status_reply", StatusReply},
      {"sha1hex", Sha1HexFn},
      {"log", Log},
      {"setresp", SetResp},
      {"set_repl", SetRepl},
      {"replicate_commands", ReturnTrue},
      {"breakpoint", ReturnFalse},
      {"debug", ReturnNothing},
      {"acl_check_cmd", AclCheckCmd},
  };
  for (const auto& fn : fns) {
    lua_pushcfunction(L, fn.func);
    lua_setfield(L, -2, fn.name);
  }
  const std::pair<const char*, int> numbers[] = {
      {"LOG_DEBUG", 0}, {"LOG_VERBOSE", 1}, {"LOG_NOTICE", 2}, {"LOG_WARNING", 3},
      {"REPL_NONE", 0}, {"REPL_AOF", 1},    {"REPL_SLAVE", 2}, {"REPL_REPLICA", 2},
      {"REPL_ALL", 3},  {"REDIS_VERSION_NUM", 0x0007000f},
  };
  for (const auto& [name, value] : numbers) {
    lua_pushinteger(L, value);
    lua_setfield(L, -2, name);
  }
  lua_pushstring(L, "7.0.15");
  lua_setfield(L, -2, "REDIS_VERSION");
  lua_setfield(L, -2, "redis");
}

}  // namespace latch::scripting
