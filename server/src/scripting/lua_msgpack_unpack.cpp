// cmsgpack.unpack / unpack_one / unpack_limit: MessagePack to Lua values, with the answers
// (offsets, limits, error texts) of redis-server 7.0.15's library.
//
// Decoding raises Lua errors (longjmps) on bad input, so it keeps its state in a plain
// struct: no C++ object with a destructor is alive across a raise. Nesting is bounded by the
// Lua stack (each level holds its table there), as in Redis: a hostile 100,000-deep input
// ends in "stack overflow", not in a blown C stack.
#include <cstdint>
#include <cstring>

#include "scripting/lua_bridge.h"

namespace latch::scripting {
namespace {

struct Cursor {
  const unsigned char* p;
  std::size_t left;
};

void Need(lua_State* L, const Cursor& c, std::size_t n) {
  if (c.left < n) luaL_error(L, "Missing bytes in input.");
}

std::uint64_t TakeBigEndian(lua_State* L, Cursor& c, int bytes) {
  Need(L, c, static_cast<std::size_t>(bytes));
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | c.p[i];
  c.p += bytes;
  c.left -= static_cast<std::size_t>(bytes);
  return v;
}

std::int64_t Signed(std::uint64_t v, int bytes) {
  if (bytes < 8) {
    std::uint64_t sign = std::uint64_t{1} << (bytes * 8 - 1);
    if (v & sign) v |= ~((sign << 1) - 1);
  }
  return static_cast<std::int64_t>(v);
}

void DecodeValue(lua_State* L, Cursor& c);

void DecodeString(lua_State* L, Cursor& c, std::size_t len) {
  Need(L, c, len);
  lua_pushlstring(L, reinterpret_cast<const char*>(c.p), len);
  c.p += len;
  c.left -= len;
}

void DecodeArray(lua_State* L, Cursor& c, std::size_t n) {
  Need(L, c, n);  // every element takes at least one byte: no huge table for a short input
  luaL_checkstack(L, 2, "in function mp_decode_to_lua_array");
  lua_createtable(L, n > 1000000 ? 1000000 : static_cast<int>(n), 0);  // a size hint only
  for (std::size_t i = 1; i <= n; ++i) {
    DecodeValue(L, c);
    lua_rawseti(L, -2, static_cast<int>(i));
  }
}

void DecodeMap(lua_State* L, Cursor& c, std::size_t n) {
  Need(L, c, n);
  luaL_checkstack(L, 3, "in function mp_decode_to_lua_hash");
  lua_createtable(L, 0, n > 1000000 ? 1000000 : static_cast<int>(n));
  for (std::size_t i = 0; i < n; ++i) {
    DecodeValue(L, c);
    DecodeValue(L, c);
    lua_settable(L, -3);  // a nil key raises "table index is nil", as in Redis
  }
}

void DecodeFloat(lua_State* L, Cursor& c, int bytes) {
  std::uint64_t bits = TakeBigEndian(L, c, bytes);
  if (bytes == 4) {
    auto b32 = static_cast<std::uint32_t>(bits);
    float f = 0;
    std::memcpy(&f, &b32, 4);
    lua_pushnumber(L, f);
  } else {
    double d = 0;
    std::memcpy(&d, &bits, 8);
    lua_pushnumber(L, d);
  }
}

void DecodeValue(lua_State* L, Cursor& c) {
  Need(L, c, 1);
  unsigned char tag = *c.p++;
  --c.left;
  if (tag <= 0x7f) return lua_pushnumber(L, tag);
  if (tag >= 0xe0) return lua_pushnumber(L, static_cast<signed char>(tag));
  if (tag <= 0x8f) return DecodeMap(L, c, tag & 0x0f);
  if (tag <= 0x9f) return DecodeArray(L, c, tag & 0x0f);
  if (tag <= 0xbf) return DecodeString(L, c, tag & 0x1f);
  switch (tag) {
    case 0xc0:
      return lua_pushnil(L);
    case 0xc2:
      return lua_pushboolean(L, 0);
    case 0xc3:
      return lua_pushboolean(L, 1);
    case 0xca:
      return DecodeFloat(L, c, 4);
    case 0xcb:
      return DecodeFloat(L, c, 8);
    case 0xcc:
      return lua_pushnumber(L, static_cast<lua_Number>(TakeBigEndian(L, c, 1)));
    case 0xcd:
      return lua_pushnumber(L, static_cast<lua_Number>(TakeBigEndian(L, c, 2)));
    case 0xce:
      return lua_pushnumber(L, static_cast<lua_Number>(TakeBigEndian(L, c, 4)));
    // uint64 is read as a signed 64-bit value (Redis answers -1 for 0xffffffffffffffff).
    case 0xcf:
      return lua_pushnumber(L, static_cast<lua_Number>(Signed(TakeBigEndian(L, c, 8), 8)));
    case 0xd0:
      return lua_pushnumber(L, static_cast<lua_Number>(Signed(TakeBigEndian(L, c, 1), 1)));
    case 0xd1:
      return lua_pushnumber(L, static_cast<lua_Number>(Signed(TakeBigEndian(L, c, 2), 2)));
    case 0xd2:
      return lua_pushnumber(L, static_cast<lua_Number>(Signed(TakeBigEndian(L, c, 4), 4)));
    case 0xd3:
      return lua_pushnumber(L, static_cast<lua_Number>(Signed(TakeBigEndian(L, c, 8), 8)));
    case 0xd9:
      return DecodeString(L, c, TakeBigEndian(L, c, 1));
    case 0xda:
      return DecodeString(L, c, TakeBigEndian(L, c, 2));
    case 0xdb:
      return DecodeString(L, c, TakeBigEndian(L, c, 4));
    case 0xdc:
      return DecodeArray(L, c, TakeBigEndian(L, c, 2));
    case 0xdd:
      return DecodeArray(L, c, TakeBigEndian(L, c, 4));
    case 0xde:
      return DecodeMap(L, c, TakeBigEndian(L, c, 2));
    case 0xdf:
      return DecodeMap(L, c, TakeBigEndian(L, c, 4));
    default:  // 0xc1 (never used), bin and ext: no Lua form in Redis's library
      luaL_error(L, "Bad data format in input.");
  }
}

// Decodes up to `limit` values (0: all) from byte `offset`. With a limit, the offset after
// the values (or -1 when the input is used up) comes first.
int Unpack(lua_State* L, lua_Integer limit, lua_Integer offset) {
  std::size_t len = 0;
  const char* s = luaL_checklstring(L, 1, &len);
  if (offset < 0 || limit < 0) {
    return luaL_error(L, "Invalid request to unpack with offset of %d and limit of %d.",
                      static_cast<int>(offset), static_cast<int>(len));
  }
  if (static_cast<std::size_t>(offset) > len) {
    return luaL_error(L, "Start offset %d greater than input length %d.", static_cast<int>(offset),
                      static_cast<int>(len));
  }
  Cursor c{reinterpret_cast<const unsigned char*>(s) + offset,
           len - static_cast<std::size_t>(offset)};
  int base = lua_gettop(L);
  lua_Integer count = 0;
  while (c.left > 0 && (limit == 0 || count < limit)) {
    luaL_checkstack(L, 1,
                    "too many return values at once; use unpack_one or unpack_limit instead.");
    DecodeValue(L, c);
    ++count;
  }
  if (limit == 0) return static_cast<int>(count);
  luaL_checkstack(L, 1, "too many return values at once; use unpack_one or unpack_limit instead.");
  lua_pushnumber(L, c.left == 0 ? -1 : static_cast<lua_Number>(len - c.left));
  lua_insert(L, base + 1);
  return static_cast<int>(count) + 1;
}

}  // namespace

int MsgpackUnpackAll(lua_State* L) { return Unpack(L, 0, 0); }

int MsgpackUnpackOne(lua_State* L) {
  lua_Integer offset = luaL_optinteger(L, 2, 0);
  lua_settop(L, 1);
  return Unpack(L, 1, offset);
}

int MsgpackUnpackLimit(lua_State* L) {
  lua_Integer limit = luaL_checkinteger(L, 2);
  lua_Integer offset = luaL_optinteger(L, 3, 0);
  lua_settop(L, 1);
  return Unpack(L, limit, offset);
}

}  // namespace latch::scripting
