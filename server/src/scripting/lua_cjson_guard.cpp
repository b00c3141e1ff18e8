// A size guard in front of Debian's cjson.encode and cjson.decode.
//
// lua-cjson 2.1.0 as Debian ships it counts its output buffer in `int`: a string of
// 358 MB or more (len * 6 + 2 overflows) is written past the end of a small buffer (the
// heap overflow of CVE-2022-24834, fixed in Redis's own copy), and an output of more than
// 2 GB (many references to one string, a sparse array encoded with nulls) makes the library
// call exit(). Before every encode this guard measures an upper bound of the output by
// walking the value as the encoder will (down to one level past its nesting limit), and
// refuses values whose JSON could pass 1 GB. Redis would try to encode them; no lock script
// comes near that size. decode is guarded the same way (its scratch buffer is sized from the
// text's length as an `int`): texts over 1 GB are refused.
//
// The wrapper calls the real encode under lua_pcall so that its errors read as when a
// script calls it directly: the script's position in front, the function named 'encode'.
#include <cmath>
#include <cstring>

#include "scripting/lua_bridge.h"

namespace latch::scripting {
namespace {

constexpr double kMaxEncodedBytes = 1024.0 * 1024 * 1024;
constexpr double kScalarBound = 32;  // "%.14g" numbers, true/false/null, with a separator

struct Measure {
  double bytes = 0;
  bool proxy = false;  // met a read-only proxy (a library table or _G)
  int max_depth = 0;
  double sparse_ratio = 0;  // encode_sparse_array's settings: which tables with holes
  double sparse_safe = 0;   // the encoder writes as arrays (others: objects or an error)
};

double KeyOrScalarBound(lua_State* L, int index) {
  if (lua_type(L, index) == LUA_TSTRING) {
    std::size_t len = 0;
    lua_tolstring(L, index, &len);
    return static_cast<double>(len) * 6 + 3;  // every byte \uXXXX-escaped, quotes, comma
  }
  return kScalarBound;
}

// Adds the bound of the value at `index` (absolute). False once the total is too large, or
// at a read-only proxy: the encoder would see it empty, while Redis's real library tables
// hold functions, which its encoder refuses.
bool AddBound(lua_State* L, int index, int depth, Measure& m) {
  if (lua_type(L, index) != LUA_TTABLE) {
    m.bytes += KeyOrScalarBound(L, index);
    return m.bytes <= kMaxEncodedBytes;
  }
  if (PushReadonlyBacking(L, index)) {
    lua_pop(L, 1);
    m.proxy = true;
    return false;
  }
  // Past the encoder's nesting limit it raises instead of writing; so does a full stack.
  if (depth > m.max_depth || !lua_checkstack(L, 3)) return true;
  double count = 0;
  double max_index = 0;
  bool array_keys = true;  // only positive integer keys: the encoder may write an array
  m.bytes += 2;
  lua_pushnil(L);
  while (lua_next(L, index) != 0) {
    int top = lua_gettop(L);
    count += 1;
    double k = lua_type(L, top - 1) == LUA_TNUMBER ? lua_tonumber(L, top - 1) : 0;
    if (k >= 1 && std::floor(k) == k) {
      if (k > max_index) max_index = k;
    } else {
      array_keys = false;
    }
    m.bytes += KeyOrScalarBound(L, top - 1) + 1;
    if (!AddBound(L, top, depth + 1, m)) {
      lua_pop(L, 2);
      return false;
    }
    lua_pop(L, 1);
  }
  // An array with holes is written with a "null," for each.
  bool as_array =
      m.sparse_ratio <= 0 || max_index <= count * m.sparse_ratio || max_index <= m.sparse_safe;
  if (array_keys && as_array && max_index > count) m.bytes += (max_index - count) * 5;
  return m.bytes <= kMaxEncodedBytes;
}

// Re-raises an error of a wrapped function as a direct call would have raised it: with the
// script's position and the function's name, which the nested call cannot see.
int RaiseAsDirect(lua_State* L, const char* name) {
  if (!lua_isstring(L, -1)) return lua_error(L);
  const char* msg = lua_tostring(L, -1);
  const char* unnamed = std::strstr(msg, " to '?' (");
  luaL_where(L, 1);
  if (std::strncmp(msg, "bad argument #", 14) == 0 && unnamed != nullptr) {
    lua_pushlstring(L, msg, static_cast<std::size_t>(unnamed - msg));
    lua_pushfstring(L, " to '%s' (", name);
    lua_pushstring(L, unnamed + std::strlen(" to '?' ("));
    lua_concat(L, 4);
  } else {
    lua_pushvalue(L, -2);
    lua_concat(L, 2);
  }
  return lua_error(L);
}

// encode(value): upvalues are the real encode and the same instance's encode_max_depth and
// encode_sparse_array (called without arguments, they report the current settings).
int GuardedEncode(lua_State* L) {
  int argc = lua_gettop(L);
  if (argc >= 1) {
    Measure m;
    lua_pushvalue(L, lua_upvalueindex(2));
    lua_call(L, 0, 1);
    m.max_depth = static_cast<int>(lua_tointeger(L, -1)) + 1;
    lua_pushvalue(L, lua_upvalueindex(3));
    lua_call(L, 0, 3);
    m.sparse_ratio = lua_tonumber(L, -2);
    m.sparse_safe = lua_tonumber(L, -1);
    lua_pop(L, 4);
    if (!AddBound(L, 1, 1, m)) {
      if (m.proxy) return luaL_error(L, "Cannot serialise function: type not supported");
      return luaL_error(L, "Cannot serialise: the JSON text would exceed %d bytes",
                        static_cast<int>(kMaxEncodedBytes));
    }
  }
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  if (lua_pcall(L, argc, 1, 0) != 0) return RaiseAsDirect(L, "encode");
  return 1;
}

// decode(text): the library sizes its scratch buffer from the text's length as an `int`.
int GuardedDecode(lua_State* L) {
  int argc = lua_gettop(L);
  std::size_t len = 0;
  if (argc >= 1 && lua_type(L, 1) == LUA_TSTRING &&
      (lua_tolstring(L, 1, &len), len) > static_cast<std::size_t>(kMaxEncodedBytes)) {
    return luaL_error(L, "Cannot decode: the JSON text exceeds %d bytes",
                      static_cast<int>(kMaxEncodedBytes));
  }
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  if (lua_pcall(L, argc, 1, 0) != 0) return RaiseAsDirect(L, "decode");
  return 1;
}

int GuardedNew(lua_State* L);

// Replaces encode and new in the cjson instance table at the top of the stack.
void GuardInstance(lua_State* L) {
  lua_getfield(L, -1, "encode");
  lua_getfield(L, -2, "encode_max_depth");
  lua_getfield(L, -3, "encode_sparse_array");
  lua_pushcclosure(L, GuardedEncode, 3);
  lua_setfield(L, -2, "encode");
  lua_getfield(L, -1, "decode");
  lua_pushcclosure(L, GuardedDecode, 1);
  lua_setfield(L, -2, "decode");
  lua_getfield(L, -1, "new");
  lua_pushcclosure(L, GuardedNew, 1);
  lua_setfield(L, -2, "new");
}

// new(): a fresh instance (its own settings), guarded like the module.
int GuardedNew(lua_State* L) {
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_call(L, 0, 1);
  GuardInstance(L);
  return 1;
}

}  // namespace

void GuardCjson(lua_State* L) { GuardInstance(L); }

}  // namespace latch::scripting
