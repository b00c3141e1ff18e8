#pragma once
// Internal to scripting/: the pieces of the Lua engine that live in separate files (the
// sandbox, the `redis` library, the conversions). Includes the Lua headers; nothing outside
// scripting/ includes this file.
//
// Lua errors are longjmps (Debian's liblua5.1 is C): a C function that may raise keeps no
// C++ object with a destructor alive at the point of lua_error(); work that needs such
// objects is done in a nested scope that ends before the raise.
#include <lua.hpp>
#include <string>
#include <string_view>

#include "commands/context.h"
#include "latch/protocol/reply_reader.h"
#include "latch/protocol/reply_writer.h"
#include "scripting/run_control.h"

namespace latch::scripting {

// What redis.call() needs during one run. Lives in the engine; `caller` is set only while
// a script runs.
struct LuaRun {
  CommandContext* caller = nullptr;  // the EVAL: server state, time snapshot, caller's proto
  Session session;                   // what nested commands see (proto = resp)
  bool read_only = false;            // EVAL_RO / EVALSHA_RO
  int resp = 2;                      // redis.setresp()
  RunControl* control = nullptr;
  std::string scratch;  // nested command replies
};

// Registry slot of the LuaRun* (light userdata).
LuaRun* CurrentRun(lua_State* L);
void SetCurrentRun(lua_State* L, LuaRun* run);

// Builds the sandbox on a fresh state: base (minus the file, env and print functions),
// table, string, math, the `redis` library, read-only globals and library tables, and the
// error handler. Leaves the stack as it found it.
void OpenSandbox(lua_State* L);
// Registers the `redis` table into the table at the top of the stack's globals.
void OpenRedisLib(lua_State* L);
// Replaces the globals loadstring and load by versions that never load bytecode.
void OpenTextLoaders(lua_State* L);
// Sets the globals cjson, bit, struct and cmsgpack (lua_libs.cpp); the sandbox makes them
// read-only afterwards.
void OpenScriptLibs(lua_State* L);
// Puts the output-size guard of lua_cjson_guard.cpp in front of encode (and of the encode
// of every instance new() makes) in the cjson table at the top of the stack.
void GuardCjson(lua_State* L);
// Push the library tables of lua_struct.cpp and lua_msgpack.cpp.
void PushStructLib(lua_State* L);
void PushMsgpackLib(lua_State* L);
// If the value at `index` is a read-only proxy, pushes the table behind it and returns true;
// otherwise pushes nothing.
bool PushReadonlyBacking(lua_State* L, int index);
// Pushes the error handler used for every script run (lua_pcall's errfunc).
void PushErrorHandler(lua_State* L);
// Pushes the backing (writable) globals table: KEYS and ARGV are set there.
void PushRealGlobals(lua_State* L);

// Set (true) in an error table whose error was counted in the stats where it arose (a
// redis.call error): the script's error reply that passes it on does not count it again.
inline constexpr char kErrorCountedField[] = "ignore_error_stats_update";
// True when the error table at `index` carries kErrorCountedField.
bool ErrorCounted(lua_State* L, int index);

// Pushes {err = "<CODE> <message>"} the way Redis builds it from "-CODE message" or a bare
// "message" (code ERR).
void PushErrorTable(lua_State* L, std::string_view error);
// Pushes a command's reply as a Lua value (RESP2 or RESP3 rules by `resp`).
void PushReply(lua_State* L, const protocol::Reply& reply, int resp);
// Writes the Lua value at `index` as a reply. `resp` is the script's redis.setresp().
void WriteLuaValue(lua_State* L, int index, protocol::ReplyWriter& out, int resp);

// The reply text for an error object raised out of a script (the error handler's table).
std::string RaisedErrorText(lua_State* L, int index, std::string_view sha);

}  // namespace latch::scripting
