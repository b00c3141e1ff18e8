// The sandbox of Redis 7.0.15 on an unmodified Lua 5.1.
//
// Redis patches its embedded Lua so that _G and the library tables are read-only tables.
// Debian's liblua5.1 has no such flag, so read-only tables are emulated with proxies: an
// empty table whose metatable reads through to the real table and refuses writes with
// Redis's message. The proxy of _G is installed as the globals table itself
// (LUA_GLOBALSINDEX), so functions made by loadstring() see it too. rawset, rawget, next,
// pairs, getmetatable and setmetatable are wrapped to see through (or refuse) proxies, and
// table.insert (which writes with lua_rawseti) is our own, refusing them. The metatable strings
// share is read-only too: the VM uses the real one, whose __index is the `string` proxy, while
// getmetatable('') hands scripts a proxy of it. Without that, one script could replace
// string functions for every later script of every client. loadstring() and load() compile
// text only (lua_text_loaders.cpp). ipairs() and # on a proxy see an empty table, as they see
// Redis's library tables (which have no array part).
#include <cstring>

#include "scripting/lua_bridge.h"

namespace latch::scripting {
namespace {

// Registry keys: addresses of these objects (light userdata), never written.
const char kRunKey = 0;
const char kReadonlyKey = 0;     // table: proxy -> backing table
const char kRealGlobalsKey = 0;  // the writable globals table
const char kOrigNextKey = 0;
const char kErrorHandlerKey = 0;
const char kGlobalsMetaKey = 0;  // read-only proxy of _G's metatable
const char kStringMetaKey = 0;   // read-only proxy of the strings' metatable

constexpr char kReadonlyError[] = "Attempt to modify a readonly table";

void PushRegistry(lua_State* L, const char* key) {
  lua_pushlightuserdata(L, const_cast<char*>(key));
  lua_rawget(L, LUA_REGISTRYINDEX);
}

// Pushes the backing table of the proxy at `index`, or nothing and returns false.
bool PushBacking(lua_State* L, int index) {
  if (!lua_istable(L, index)) return false;
  int abs = index > 0 ? index : lua_gettop(L) + index + 1;
  PushRegistry(L, &kReadonlyKey);
  lua_pushvalue(L, abs);
  lua_rawget(L, -2);
  lua_remove(L, -2);
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    return false;
  }
  return true;
}

int ReadonlyNewIndex(lua_State* L) {
  luaL_where(L, 1);
  lua_pushstring(L, kReadonlyError);
  lua_concat(L, 2);
  return lua_error(L);
}

// __index of _G: a missing name read from Lua code is an error, as in Redis.
int GlobalsIndex(lua_State* L) {
  lua_pushvalue(L, 2);
  lua_rawget(L, lua_upvalueindex(1));
  if (!lua_isnil(L, -1)) return 1;
  lua_Debug ar;
  if (lua_getstack(L, 1, &ar) && lua_getinfo(L, "S", &ar) && std::strcmp(ar.what, "C") != 0) {
    luaL_where(L, 1);
    lua_pushstring(L, "Script attempted to access nonexistent global variable '");
    lua_getglobal(L, "tostring");
    lua_pushvalue(L, 2);
    lua_call(L, 1, 1);
    lua_pushstring(L, "'");
    lua_concat(L, 4);
    return lua_error(L);
  }
  return 1;
}

// Replaces the table at the top of the stack by a read-only proxy of it. With
// `strict_index`, reading a missing field raises (globals).
void MakeReadonly(lua_State* L, bool strict_index) {
  int backing = lua_gettop(L);
  lua_newtable(L);  // proxy
  lua_newtable(L);  // metatable
  lua_pushvalue(L, backing);
  if (strict_index) lua_pushcclosure(L, GlobalsIndex, 1);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, ReadonlyNewIndex);
  lua_setfield(L, -2, "__newindex");
  lua_setmetatable(L, -2);
  PushRegistry(L, &kReadonlyKey);
  lua_pushvalue(L, -2);
  lua_pushvalue(L, backing);
  lua_rawset(L, -3);
  lua_pop(L, 1);
  lua_replace(L, backing);
}

int RawSetWrapper(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checkany(L, 2);
  luaL_checkany(L, 3);
  if (PushBacking(L, 1)) {
    lua_pushstring(L, kReadonlyError);
    return lua_error(L);
  }
  lua_settop(L, 3);
  lua_rawset(L, 1);
  return 1;
}

int RawGetWrapper(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checkany(L, 2);
  if (PushBacking(L, 1)) lua_replace(L, 1);
  lua_settop(L, 2);
  lua_rawget(L, 1);
  return 1;
}

int NextWrapper(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  if (PushBacking(L, 1)) lua_replace(L, 1);
  lua_settop(L, 2);
  if (lua_next(L, 1)) return 2;
  lua_pushnil(L);
  return 1;
}

int PairsWrapper(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_pushcfunction(L, NextWrapper);
  lua_pushvalue(L, 1);
  lua_pushnil(L);
  return 3;
}

// Redis's _G has a (read-only) metatable; its library tables have none. Strings get the
// proxy of their metatable.
int GetMetatableWrapper(lua_State* L) {
  luaL_checkany(L, 1);
  if (lua_type(L, 1) == LUA_TSTRING) {
    PushRegistry(L, &kStringMetaKey);
    return 1;
  }
  if (PushBacking(L, 1)) {
    if (lua_rawequal(L, 1, LUA_GLOBALSINDEX)) {
      PushRegistry(L, &kGlobalsMetaKey);
    } else {
      lua_pushnil(L);
    }
    return 1;
  }
  lua_settop(L, 1);
  lua_pushvalue(L, lua_upvalueindex(1));  // the original getmetatable
  lua_insert(L, 1);
  lua_call(L, 1, 1);
  return 1;
}

int SetMetatableWrapper(lua_State* L) {
  if (PushBacking(L, 1)) {
    lua_pushstring(L, kReadonlyError);
    return lua_error(L);
  }
  int n = lua_gettop(L);
  lua_pushvalue(L, lua_upvalueindex(1));  // the original setmetatable
  lua_insert(L, 1);
  lua_call(L, n, 1);
  return 1;
}

// table.insert(t, [pos,] value) of Lua 5.1, which stores with lua_rawseti (no metatable sees
// it): implemented here so that a proxy is refused before the first store while argument
// errors still name 'insert' and the script's line (a wrapper calling the original could not).
int TableInsert(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  int end = static_cast<int>(lua_objlen(L, 1)) + 1;  // the first free slot
  int pos = end;
  switch (lua_gettop(L)) {
    case 2:
      break;
    case 3:
      pos = luaL_checkint(L, 2);
      if (pos > end) end = pos;
      break;
    default:
      return luaL_error(L, "wrong number of arguments to 'insert'");
  }
  if (PushBacking(L, 1)) {
    lua_pushstring(L, kReadonlyError);
    return lua_error(L);
  }
  for (int i = end; i > pos; --i) {  // move up t[pos..end-1]
    lua_rawgeti(L, 1, i - 1);
    lua_rawseti(L, 1, i);
  }
  lua_rawseti(L, 1, pos);  // the value, on top
  return 0;
}

// Redis 7.0's pcall: an error table with an `err` string is returned as that string.
int PCallWrapper(lua_State* L) {
  int argc = lua_gettop(L);
  luaL_checkany(L, 1);
  lua_pushboolean(L, 1);
  lua_insert(L, 1);
  if (lua_pcall(L, argc - 1, LUA_MULTRET, 0) != 0) {
    lua_remove(L, 1);
    if (lua_istable(L, -1)) {
      lua_getfield(L, -1, "err");
      if (lua_isstring(L, -1)) {
        lua_replace(L, -2);
      } else {
        lua_pop(L, 1);
      }
    }
    lua_pushboolean(L, 0);
    lua_insert(L, 1);
  }
  return lua_gettop(L);
}

// Redis's error handler: turns any error into {err=..., source=..., line=...} where source
// and line are those of the Lua code that raised it (skipping one C frame, e.g. redis.call).
int ErrorHandler(lua_State* L) {
  lua_Debug ar;
  bool have = lua_getstack(L, 1, &ar) && lua_getinfo(L, "nSl", &ar);
  if (have && std::strcmp(ar.what, "C") == 0) {
    have = lua_getstack(L, 2, &ar) && lua_getinfo(L, "nSl", &ar);
  }
  if (!lua_istable(L, 1)) {
    lua_getglobal(L, "tostring");
    lua_pushvalue(L, 1);
    lua_call(L, 1, 1);
    lua_pushstring(L, "ERR ");
    lua_insert(L, -2);
    lua_concat(L, 2);
    lua_newtable(L);
    lua_insert(L, -2);
    lua_setfield(L, -2, "err");
    lua_replace(L, 1);
  }
  lua_settop(L, 1);
  if (have) {
    lua_pushstring(L, ar.source);
    lua_setfield(L, 1, "source");
    lua_pushinteger(L, ar.currentline);
    lua_setfield(L, 1, "line");
  }
  return 1;
}

void OpenLib(lua_State* L, lua_CFunction open, const char* name) {
  lua_pushcfunction(L, open);
  lua_pushstring(L, name);
  lua_call(L, 1, 0);
}

void Wrap(lua_State* L, const char* name, lua_CFunction wrapper, bool with_original) {
  if (with_original) {
    lua_getglobal(L, name);
    lua_pushcclosure(L, wrapper, 1);
  } else {
    lua_pushcfunction(L, wrapper);
  }
  lua_setglobal(L, name);
}

// Replaces table.insert inside the (still writable) table library.
void ReplaceTableInsert(lua_State* L) {
  lua_getglobal(L, LUA_TABLIBNAME);
  lua_pushcfunction(L, TableInsert);
  lua_setfield(L, -2, "insert");
  lua_pop(L, 1);
}

// Gives strings a new metatable whose __index is the read-only `string` proxy (already the
// global), and keeps a read-only proxy of that metatable for getmetatable().
void ProtectStringMetatable(lua_State* L) {
  lua_pushliteral(L, "");
  lua_newtable(L);
  lua_getglobal(L, LUA_STRLIBNAME);
  lua_setfield(L, -2, "__index");
  lua_pushvalue(L, -1);
  lua_setmetatable(L, -3);
  lua_pushlightuserdata(L, const_cast<char*>(&kStringMetaKey));
  lua_insert(L, -2);
  MakeReadonly(L, false);
  lua_rawset(L, LUA_REGISTRYINDEX);
  lua_pop(L, 1);
}

}  // namespace

LuaRun* CurrentRun(lua_State* L) {
  PushRegistry(L, &kRunKey);
  auto* run = static_cast<LuaRun*>(lua_touserdata(L, -1));
  lua_pop(L, 1);
  return run;
}

void SetCurrentRun(lua_State* L, LuaRun* run) {
  lua_pushlightuserdata(L, const_cast<char*>(&kRunKey));
  lua_pushlightuserdata(L, run);
  lua_rawset(L, LUA_REGISTRYINDEX);
}

void PushErrorHandler(lua_State* L) { PushRegistry(L, &kErrorHandlerKey); }
bool PushReadonlyBacking(lua_State* L, int index) { return PushBacking(L, index); }
void PushRealGlobals(lua_State* L) { PushRegistry(L, &kRealGlobalsKey); }

void OpenSandbox(lua_State* L) {
  int top = lua_gettop(L);
  OpenLib(L, luaopen_base, "");
  OpenLib(L, luaopen_table, LUA_TABLIBNAME);
  OpenLib(L, luaopen_string, LUA_STRLIBNAME);
  OpenLib(L, luaopen_math, LUA_MATHLIBNAME);
  // Not in Redis's sandbox: files, environments, printing to stdout, userdata proxies.
  for (const char* name : {"dofile", "loadfile", "print", "setfenv", "getfenv", "newproxy"}) {
    lua_pushnil(L);
    lua_setglobal(L, name);
  }
  lua_pushlightuserdata(L, const_cast<char*>(&kReadonlyKey));
  lua_newtable(L);
  lua_rawset(L, LUA_REGISTRYINDEX);

  OpenTextLoaders(L);
  ReplaceTableInsert(L);
  lua_pushvalue(L, LUA_GLOBALSINDEX);
  OpenRedisLib(L);
  lua_pop(L, 1);
  OpenScriptLibs(L);
  lua_pushcfunction(L, ErrorHandler);
  lua_pushlightuserdata(L, const_cast<char*>(&kErrorHandlerKey));
  lua_pushvalue(L, -2);
  lua_rawset(L, LUA_REGISTRYINDEX);
  lua_setglobal(L, "__redis__err__handler");

  lua_getglobal(L, "next");
  lua_pushlightuserdata(L, const_cast<char*>(&kOrigNextKey));
  lua_insert(L, -2);
  lua_rawset(L, LUA_REGISTRYINDEX);
  Wrap(L, "rawset", RawSetWrapper, false);
  Wrap(L, "rawget", RawGetWrapper, false);
  Wrap(L, "next", NextWrapper, false);
  Wrap(L, "pairs", PairsWrapper, false);
  Wrap(L, "getmetatable", GetMetatableWrapper, true);
  Wrap(L, "setmetatable", SetMetatableWrapper, true);
  Wrap(L, "pcall", PCallWrapper, false);

  // Library tables become read-only proxies.
  for (const char* lib :
       {"string", "table", "math", "coroutine", "redis", "cjson", "bit", "struct", "cmsgpack"}) {
    lua_getglobal(L, lib);
    MakeReadonly(L, false);
    lua_setglobal(L, lib);
  }
  ProtectStringMetatable(L);
  // KEYS and ARGV exist before the first run (an empty table each).
  lua_newtable(L);
  lua_setglobal(L, "KEYS");
  lua_newtable(L);
  lua_setglobal(L, "ARGV");

  // Finally the globals: the real table is kept for the engine, the proxy replaces it.
  lua_pushlightuserdata(L, const_cast<char*>(&kRealGlobalsKey));
  lua_pushvalue(L, LUA_GLOBALSINDEX);
  lua_rawset(L, LUA_REGISTRYINDEX);
  lua_pushvalue(L, LUA_GLOBALSINDEX);
  MakeReadonly(L, true);
  lua_pushlightuserdata(L, const_cast<char*>(&kGlobalsMetaKey));
  lua_getmetatable(L, -2);
  MakeReadonly(L, false);
  lua_rawset(L, LUA_REGISTRYINDEX);
  PushRealGlobals(L);
  lua_pushvalue(L, -2);
  lua_setfield(L, -2, "_G");
  lua_pop(L, 1);
  lua_replace(L, LUA_GLOBALSINDEX);
  lua_settop(L, top);
}

}  // namespace latch::scripting
