// The libraries Redis 7.0 gives scripts beside the standard ones: cjson (behind the size
// guard of lua_cjson_guard.cpp) and bit from
// Debian's lua-cjson and lua-bitop (the same upstream releases Redis embeds: lua-cjson 2.1.0,
// LuaBitOp 1.0.2), struct and cmsgpack from our own lua_struct.cpp and lua_msgpack*.cpp.
// OpenSandbox makes each table read-only afterwards.
#include <climits>
#include <cstdint>
#include <cstring>

#include "scripting/lua_bridge.h"

extern "C" {
#include <lua-bitop.h>
#include <lua-cjson.h>
}

namespace latch::scripting {
namespace {

// LuaBitOp 1.0.2 negates a negative digit count; for INT32_MIN that overflows and its
// tohex() then pushes a string of negative length. Redis's copy clamps the count to
// -INT32_MAX first (8 uppercase digits); so does this wrapper before calling Debian's. It
// checks the arguments itself so that a bad one is reported as Redis reports it (a raise
// inside the wrapped call would name neither 'tohex' nor the script's line). The count is
// reduced to 32 bits the way LuaBitOp reduces every argument (modulo 2^32, rounding), so
// 2^31 is caught as well as -2^31.
int SafeToHex(lua_State* L) {
  luaL_checknumber(L, 1);
  if (!lua_isnone(L, 2)) {
    double shifted = static_cast<double>(luaL_checknumber(L, 2)) + 6755399441055744.0;
    std::uint64_t bits = 0;
    std::memcpy(&bits, &shifted, sizeof bits);
    if (static_cast<std::uint32_t>(bits) == 0x80000000U) {
      lua_pushnumber(L, -INT_MAX);
      lua_replace(L, 2);
    }
  }
  int argc = lua_gettop(L);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, argc, 1);
  return 1;
}

void SetLib(lua_State* L, const char* name) { lua_setglobal(L, name); }

}  // namespace

void OpenScriptLibs(lua_State* L) {
  lua_pushcfunction(L, luaopen_cjson);
  lua_call(L, 0, 1);
  GuardCjson(L);
  SetLib(L, "cjson");

  lua_pushcfunction(L, luaopen_bit);
  lua_call(L, 0, 1);
  lua_getfield(L, -1, "tohex");
  lua_pushcclosure(L, SafeToHex, 1);
  lua_setfield(L, -2, "tohex");
  SetLib(L, "bit");

  PushStructLib(L);
  SetLib(L, "struct");
  PushMsgpackLib(L);
  SetLib(L, "cmsgpack");
}

}  // namespace latch::scripting
