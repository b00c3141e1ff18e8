// loadstring() and load() that only ever compile source text, as Redis 7.0's.
//
// Lua 5.1 loads precompiled bytecode when a chunk starts with the signature byte ESC, and its
// bytecode verifier can be fooled (CVE-2015-4335: crafted bytecode reads and writes outside
// the VM's memory). Redis patches its Lua so that every chunk goes to the text parser, where
// ESC is just an unexpected symbol. Debian's liblua5.1 is unpatched, so we reach the same
// result from outside: a chunk whose first byte is ESC gets one leading space, which the
// text parser skips (so line numbers and the error text stay those of the patched parser)
// while the undump path is never chosen. Every other chunk is passed through untouched.
#include <cstring>
#include <string>

#include "scripting/lua_bridge.h"

namespace latch::scripting {
namespace {

constexpr char kSignatureByte = '\033';  // LUA_SIGNATURE[0]

struct StringSource {
  const char* data;
  std::size_t size;
  bool space_sent;
};

const char* ReadString(lua_State*, void* ud, std::size_t* size) {
  auto* src = static_cast<StringSource*>(ud);
  if (!src->space_sent && src->size > 0 && src->data[0] == kSignatureByte) {
    src->space_sent = true;
    *size = 1;
    return " ";
  }
  src->space_sent = true;
  *size = src->size;
  src->size = 0;
  return *size > 0 ? src->data : nullptr;
}

// Pushes the compiled function, or nil and the message (the contract of Lua's load family).
int FinishLoad(lua_State* L, int status) {
  if (status == 0) return 1;
  lua_pushnil(L);
  lua_insert(L, -2);
  return 2;
}

// loadstring(s [, chunkname]): the chunk name defaults to the source itself, as in Lua.
int TextLoadString(lua_State* L) {
  std::size_t len = 0;
  const char* s = luaL_checklstring(L, 1, &len);
  const char* name = luaL_optstring(L, 2, s);
  StringSource src{s, len, false};
  return FinishLoad(L, lua_load(L, ReadString, &src, name));
}

// load(f [, chunkname]): f returns the pieces of the chunk, nil or "" at the end. The last
// piece is kept at stack slot 3 so that its bytes live while the parser reads them.
struct FunctionSource {
  bool first = true;
  bool space_pending = false;
};

const char* ReadFunction(lua_State* L, void* ud, std::size_t* size) {
  auto* src = static_cast<FunctionSource*>(ud);
  if (src->space_pending) {
    src->space_pending = false;
    *size = 0;
    const char* piece = lua_tolstring(L, 3, size);
    return piece;
  }
  luaL_checkstack(L, 2, "too many nested functions");
  lua_pushvalue(L, 1);
  lua_call(L, 0, 1);
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    *size = 0;
    return nullptr;
  }
  if (!lua_isstring(L, -1)) luaL_error(L, "reader function must return a string");
  lua_replace(L, 3);
  const char* piece = lua_tolstring(L, 3, size);
  if (src->first && *size > 0 && piece[0] == kSignatureByte) {
    src->space_pending = true;
    src->first = false;
    *size = 1;
    return " ";
  }
  src->first = false;
  return piece;
}

int TextLoad(lua_State* L) {
  const char* name = luaL_optstring(L, 2, "=(load)");
  luaL_checktype(L, 1, LUA_TFUNCTION);
  lua_settop(L, 3);
  FunctionSource src;
  return FinishLoad(L, lua_load(L, ReadFunction, &src, name));
}

}  // namespace

void OpenTextLoaders(lua_State* L) {
  lua_pushcfunction(L, TextLoadString);
  lua_setglobal(L, "loadstring");
  lua_pushcfunction(L, TextLoad);
  lua_setglobal(L, "load");
}

}  // namespace latch::scripting
