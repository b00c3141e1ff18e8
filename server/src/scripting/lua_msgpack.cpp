// The `cmsgpack` library of Redis's scripts: MessagePack pack/unpack of Lua values. Written
// from the MessagePack specification and from redis-server 7.0.15's observable answers (see
// tests/wire/corpus/script_cmsgpack.txt), not from its source.
//
// Packing: integral numbers in int64 range take the smallest integer form, other numbers a
// float32 when exact, else a float64; strings the str forms; a table whose keys are exactly
// 1..n is an array (the empty table too), any other a map; tables nested deeper than 16, and
// values MessagePack has no form for (functions, userdata, ...), become nil.
// Unpacking: every form but bin and ext (refused as bad data, as Redis's library does).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

#include "scripting/lua_bridge.h"

namespace latch::scripting {
namespace {

constexpr int kMaxPackNesting = 16;

void PutBigEndian(std::string& out, std::uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

void PutTagged(std::string& out, unsigned char tag, std::uint64_t v, int bytes) {
  out.push_back(static_cast<char>(tag));
  PutBigEndian(out, v, bytes);
}

void PackInteger(std::string& out, std::int64_t n) {
  auto u = static_cast<std::uint64_t>(n);
  if (n >= 0) {
    if (n < 128) return out.push_back(static_cast<char>(n));
    if (n < 0x100) return PutTagged(out, 0xcc, u, 1);
    if (n < 0x10000) return PutTagged(out, 0xcd, u, 2);
    if (n < 0x100000000LL) return PutTagged(out, 0xce, u, 4);
    return PutTagged(out, 0xcf, u, 8);
  }
  if (n >= -32) return out.push_back(static_cast<char>(n));
  if (n >= -128) return PutTagged(out, 0xd0, u, 1);
  if (n >= -32768) return PutTagged(out, 0xd1, u, 2);
  if (n >= -2147483648LL) return PutTagged(out, 0xd2, u, 4);
  PutTagged(out, 0xd3, u, 8);
}

void PackNumber(std::string& out, double n) {
  if (n >= -9223372036854775808.0 && n < 9223372036854775808.0 &&
      static_cast<double>(static_cast<std::int64_t>(n)) == n) {
    return PackInteger(out, static_cast<std::int64_t>(n));
  }
  auto f = static_cast<float>(n);
  if (static_cast<double>(f) == n) {
    std::uint32_t bits = 0;
    std::memcpy(&bits, &f, 4);
    return PutTagged(out, 0xca, bits, 4);
  }
  std::uint64_t bits = 0;
  std::memcpy(&bits, &n, 8);
  PutTagged(out, 0xcb, bits, 8);
}

void PackString(std::string& out, const char* s, std::size_t len) {
  if (len < 32) {
    out.push_back(static_cast<char>(0xa0 | len));
  } else if (len < 0x100) {
    PutTagged(out, 0xd9, len, 1);
  } else if (len < 0x10000) {
    PutTagged(out, 0xda, len, 2);
  } else {
    PutTagged(out, 0xdb, len, 4);
  }
  out.append(s, len);
}

void PackHeader(std::string& out, std::size_t n, bool array) {
  if (n < 16) return out.push_back(static_cast<char>((array ? 0x90 : 0x80) | n));
  if (n < 0x10000) return PutTagged(out, array ? 0xdc : 0xde, n, 2);
  PutTagged(out, array ? 0xdd : 0xdf, n, 4);
}

// The number of entries of the table at `index`, and whether its keys are exactly 1..n.
std::size_t CountEntries(lua_State* L, int index, bool* is_array) {
  std::size_t count = 0;
  double max_key = 0;
  bool integral_keys = true;
  lua_pushnil(L);
  while (lua_next(L, index) != 0) {
    lua_pop(L, 1);
    ++count;
    double k = lua_type(L, -1) == LUA_TNUMBER ? lua_tonumber(L, -1) : 0;
    if (k >= 1 && std::floor(k) == k) {
      if (k > max_key) max_key = k;
    } else {
      integral_keys = false;
    }
  }
  *is_array = integral_keys && max_key == static_cast<double>(count);
  return count;
}

void PackValue(lua_State* L, std::string& out, int index, int depth);

void PackTable(lua_State* L, std::string& out, int index, int depth) {
  if (depth > kMaxPackNesting || !lua_checkstack(L, 4)) return out.push_back('\xc0');
  // A read-only proxy (a library table, _G) packs as the table it stands for, as Redis's
  // real library tables do.
  if (PushReadonlyBacking(L, index)) {
    PackTable(L, out, lua_gettop(L), depth);
    lua_pop(L, 1);
    return;
  }
  bool is_array = false;
  std::size_t count = CountEntries(L, index, &is_array);
  PackHeader(out, count, is_array);
  if (is_array) {
    for (std::size_t i = 1; i <= count; ++i) {
      lua_rawgeti(L, index, static_cast<int>(i));
      PackValue(L, out, lua_gettop(L), depth + 1);
      lua_pop(L, 1);
    }
    return;
  }
  lua_pushnil(L);
  while (lua_next(L, index) != 0) {
    int top = lua_gettop(L);
    PackValue(L, out, top - 1, depth + 1);
    PackValue(L, out, top, depth + 1);
    lua_pop(L, 1);
  }
}

void PackValue(lua_State* L, std::string& out, int index, int depth) {
  switch (lua_type(L, index)) {
    case LUA_TNUMBER:
      return PackNumber(out, lua_tonumber(L, index));
    case LUA_TBOOLEAN:
      return out.push_back(lua_toboolean(L, index) ? '\xc3' : '\xc2');
    case LUA_TSTRING: {
      std::size_t len = 0;
      const char* s = lua_tolstring(L, index, &len);
      return PackString(out, s, len);
    }
    case LUA_TTABLE:
      return PackTable(L, out, index, depth);
    default:
      out.push_back('\xc0');
  }
}

// pack(v1, v2, ...): the concatenated encodings. Raw table access only, so no Lua code runs
// and nothing raises while the C++ buffer is alive.
int Pack(lua_State* L) {
  int argc = lua_gettop(L);
  if (argc == 0) return luaL_argerror(L, 0, "MessagePack pack needs input.");
  {
    std::string out;
    for (int i = 1; i <= argc; ++i) PackValue(L, out, i, 1);
    lua_pushlstring(L, out.data(), out.size());
  }
  return 1;
}

}  // namespace

int MsgpackUnpackAll(lua_State* L);
int MsgpackUnpackOne(lua_State* L);
int MsgpackUnpackLimit(lua_State* L);

void PushMsgpackLib(lua_State* L) {
  lua_newtable(L);
  const luaL_Reg fns[] = {
      {"pack", Pack},
      {"unpack", MsgpackUnpackAll},
      {"unpack_one", MsgpackUnpackOne},
      {"unpack_limit", MsgpackUnpackLimit},
  };
  for (const auto& fn : fns) {
    lua_pushcfunction(L, fn.func);
    lua_setfield(L, -2, fn.name);
  }
  // The identification fields Redis's library carries; scripts can read them.
  const std::pair<const char*, const char*> fields[] = {
      {"_NAME", "cmsgpack"},
      {"_VERSION", "lua-cmsgpack 0.4.0"},
      {"_COPYRIGHT", "Copyright (C) 2012, Salvatore Sanfilippo"},
      {"_DESCRIPTION", "MessagePack C implementation for Lua"},
  };
  for (const auto& [name, value] : fields) {
    lua_pushstring(L, value);
    lua_setfield(L, -2, name);
  }
}

}  // namespace latch::scripting
