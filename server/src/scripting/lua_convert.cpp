// Conversions between command replies and Lua values, with Redis 7.0's rules.
#include <cmath>
#include <cstdint>
#include <string>

#include "scripting/lua_bridge.h"

namespace latch::scripting {
namespace {

using protocol::Reply;
using protocol::ReplyType;

// Redis casts a Lua number to long long; out-of-range values and NaN come out as
// LLONG_MIN on the x86-64 build we compare with. Spelled out here: the cast is UB in C++.
std::int64_t LuaNumberToInteger(lua_Number n) {
  if (std::isnan(n) || n >= 9223372036854775808.0 || n < -9223372036854775808.0) {
    return INT64_MIN;
  }
  return static_cast<std::int64_t>(n);
}

std::string Sanitized(const char* s, std::size_t len) {
  std::string out(s, len);
  for (char& c : out) {
    if (c == '\r' || c == '\n') c = ' ';
  }
  return out;
}

// t[name] (raw) pushed; returns its type.
int RawField(lua_State* L, int table, const char* name) {
  lua_pushstring(L, name);
  lua_rawget(L, table);
  return lua_type(L, -1);
}

void SetField(lua_State* L, const char* name) { lua_setfield(L, -2, name); }

void WriteValue(lua_State* L, int index, protocol::ReplyWriter& out, int resp, int depth);

void WriteTable(lua_State* L, int t, protocol::ReplyWriter& out, int resp, int depth) {
  if (!lua_checkstack(L, 4) || depth > 1000) {
    out.Error("ERR reached lua stack limit");
    return;
  }
  std::size_t len = 0;
  const char* s = nullptr;
  if (RawField(L, t, "err") == LUA_TSTRING) {
    s = lua_tolstring(L, -1, &len);
    const std::string text = Sanitized(s, len);
    lua_pop(L, 1);
    if (ErrorCounted(L, t)) {
      out.ErrorAlreadyCounted(text);
    } else {
      out.Error(text);
    }
    return;
  }
  lua_pop(L, 1);
  if (RawField(L, t, "ok") == LUA_TSTRING) {
    s = lua_tolstring(L, -1, &len);
    out.Simple(Sanitized(s, len));
    lua_pop(L, 1);
    return;
  }
  lua_pop(L, 1);
  if (RawField(L, t, "double") == LUA_TNUMBER) {
    out.Double(lua_tonumber(L, -1));
    lua_pop(L, 1);
    return;
  }
  lua_pop(L, 1);
  if (RawField(L, t, "big_number") == LUA_TSTRING) {
    s = lua_tolstring(L, -1, &len);
    std::string text = Sanitized(s, len);
    if (out.proto() >= 3) {
      out.Raw("(" + text + "\r\n");
    } else {
      out.Bulk(text);
    }
    lua_pop(L, 1);
    return;
  }
  lua_pop(L, 1);
  if (RawField(L, t, "map") == LUA_TTABLE) {
    int m = lua_gettop(L);
    std::size_t pairs = 0;
    lua_pushnil(L);
    while (lua_next(L, m)) {
      ++pairs;
      lua_pop(L, 1);
    }
    out.MapHeader(pairs);
    lua_pushnil(L);
    while (lua_next(L, m)) {
      WriteValue(L, -2, out, resp, depth + 1);
      WriteValue(L, -1, out, resp, depth + 1);
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
    return;
  }
  lua_pop(L, 1);
  if (RawField(L, t, "set") == LUA_TTABLE) {
    int m = lua_gettop(L);
    std::size_t n = 0;
    lua_pushnil(L);
    while (lua_next(L, m)) {
      ++n;
      lua_pop(L, 1);
    }
    out.SetHeader(n);
    lua_pushnil(L);
    while (lua_next(L, m)) {
      WriteValue(L, -2, out, resp, depth + 1);
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
    return;
  }
  lua_pop(L, 1);
  if (RawField(L, t, "verbatim_string") == LUA_TTABLE) {
    int v = lua_gettop(L);
    int ft = RawField(L, v, "format");
    int st = RawField(L, v, "string");
    if (ft == LUA_TSTRING && st == LUA_TSTRING) {
      std::size_t flen = 0;
      const char* f = lua_tolstring(L, -2, &flen);
      s = lua_tolstring(L, -1, &len);
      if (out.proto() >= 3) {
        std::string body = std::string(f, flen).substr(0, 3) + ":" + std::string(s, len);
        out.Raw("=" + std::to_string(body.size()) + "\r\n" + body + "\r\n");
      } else {
        out.Bulk(std::string_view(s, len));
      }
      lua_pop(L, 3);
      return;
    }
    lua_pop(L, 2);
  }
  lua_pop(L, 1);
  // An array: elements 1..n up to the first nil.
  std::size_t n = 0;
  while (true) {
    lua_rawgeti(L, t, static_cast<int>(n + 1));
    bool nil = lua_isnil(L, -1);
    lua_pop(L, 1);
    if (nil) break;
    ++n;
  }
  out.ArrayHeader(n);
  for (std::size_t i = 1; i <= n; ++i) {
    lua_rawgeti(L, t, static_cast<int>(i));
    WriteValue(L, -1, out, resp, depth + 1);
    lua_pop(L, 1);
  }
}

void WriteValue(lua_State* L, int index, protocol::ReplyWriter& out, int resp, int depth) {
  int abs = index > 0 ? index : lua_gettop(L) + index + 1;
  switch (lua_type(L, abs)) {
    case LUA_TSTRING: {
      std::size_t len = 0;
      const char* s = lua_tolstring(L, abs, &len);
      out.Bulk(std::string_view(s, len));
      return;
    }
    case LUA_TBOOLEAN:
      if (resp == 2) {
        if (lua_toboolean(L, abs)) {
          out.Integer(1);
        } else {
          out.Null();
        }
      } else {
        out.Bool(lua_toboolean(L, abs) != 0);
      }
      return;
    case LUA_TNUMBER:
      out.Integer(LuaNumberToInteger(lua_tonumber(L, abs)));
      return;
    case LUA_TTABLE:
      WriteTable(L, abs, out, resp, depth);
      return;
    default:
      out.Null();
      return;
  }
}

}  // namespace

bool ErrorCounted(lua_State* L, int index) {
  const int abs = index > 0 ? index : lua_gettop(L) + index + 1;
  lua_getfield(L, abs, kErrorCountedField);
  const bool counted = lua_toboolean(L, -1) != 0;
  lua_pop(L, 1);
  return counted;
}

void PushErrorTable(lua_State* L, std::string_view error) {
  std::string code = "ERR";
  std::string msg;
  if (!error.empty() && error[0] == '-') {
    std::string_view rest = error.substr(1);
    auto space = rest.find(' ');
    if (space == std::string_view::npos) {
      msg = rest;
    } else {
      code = rest.substr(0, space);
      msg = rest.substr(space + 1);
    }
  } else {
    msg = error;
  }
  auto first = msg.find_first_not_of("\r\n");
  auto last = msg.find_last_not_of("\r\n");
  msg = first == std::string::npos ? std::string() : msg.substr(first, last - first + 1);
  std::string text = code + " " + msg;
  lua_newtable(L);
  lua_pushlstring(L, text.data(), text.size());
  lua_setfield(L, -2, "err");
}

void PushReply(lua_State* L, const Reply& r, int resp) {
  lua_checkstack(L, 4);
  switch (r.type) {
    case ReplyType::kSimpleString:
      lua_newtable(L);
      lua_pushlstring(L, r.str.data(), r.str.size());
      SetField(L, "ok");
      return;
    case ReplyType::kError:
      PushErrorTable(L, "-" + r.str);
      return;
    case ReplyType::kInteger:
      lua_pushnumber(L, static_cast<lua_Number>(r.integer));
      return;
    case ReplyType::kBulkString:
      lua_pushlstring(L, r.str.data(), r.str.size());
      return;
    case ReplyType::kNull:
      if (resp == 2) {
        lua_pushboolean(L, 0);
      } else {
        lua_pushnil(L);
      }
      return;
    case ReplyType::kBoolean:
      lua_pushboolean(L, r.boolean ? 1 : 0);
      return;
    case ReplyType::kDouble:
      lua_newtable(L);
      lua_pushnumber(L, r.number);
      SetField(L, "double");
      return;
    case ReplyType::kBigNumber:
      lua_newtable(L);
      lua_pushlstring(L, r.str.data(), r.str.size());
      SetField(L, "big_number");
      return;
    case ReplyType::kVerbatim:
      lua_newtable(L);
      lua_newtable(L);
      lua_pushlstring(L, r.verbatim_format.data(), r.verbatim_format.size());
      SetField(L, "format");
      lua_pushlstring(L, r.str.data(), r.str.size());
      SetField(L, "string");
      SetField(L, "verbatim_string");
      return;
    case ReplyType::kMap:
      lua_newtable(L);
      lua_newtable(L);
      for (std::size_t i = 0; i + 1 < r.elements.size(); i += 2) {
        PushReply(L, r.elements[i], resp);
        PushReply(L, r.elements[i + 1], resp);
        lua_settable(L, -3);
      }
      SetField(L, "map");
      return;
    case ReplyType::kSet:
      if (resp == 3) {
        lua_newtable(L);
        lua_newtable(L);
        for (const Reply& e : r.elements) {
          PushReply(L, e, resp);
          lua_pushboolean(L, 1);
          lua_settable(L, -3);
        }
        SetField(L, "set");
        return;
      }
      [[fallthrough]];
    case ReplyType::kArray:
    case ReplyType::kPush:
      lua_newtable(L);
      for (std::size_t i = 0; i < r.elements.size(); ++i) {
        PushReply(L, r.elements[i], resp);
        lua_rawseti(L, -2, static_cast<int>(i + 1));
      }
      return;
  }
  lua_pushboolean(L, 0);
}

void WriteLuaValue(lua_State* L, int index, protocol::ReplyWriter& out, int resp) {
  WriteValue(L, index, out, resp, 0);
}

std::string RaisedErrorText(lua_State* L, int index, std::string_view sha) {
  int abs = index > 0 ? index : lua_gettop(L) + index + 1;
  if (!lua_istable(L, abs)) {
    const char* s = lua_tostring(L, abs);
    std::string msg = s ? std::string(s).substr(0, 100) : "execution failure";
    std::string text = "ERR Error running script f_" + std::string(sha) + ", " + msg + "\n";
    return Sanitized(text.data(), text.size());
  }
  std::string text;
  lua_getfield(L, abs, "err");
  if (lua_type(L, -1) == LUA_TSTRING || lua_type(L, -1) == LUA_TNUMBER) {
    std::size_t len = 0;
    const char* s = lua_tolstring(L, -1, &len);
    text.assign(s, len);
  }
  lua_getfield(L, abs, "source");
  lua_getfield(L, abs, "line");
  const char* source = lua_tostring(L, -2);
  const char* line = lua_tostring(L, -1);
  if (source != nullptr && line != nullptr) {
    text += " script: " + std::string(sha) + ", on " + source + ":" + line + ".";
  }
  lua_pop(L, 3);
  return Sanitized(text.data(), text.size());
}

}  // namespace latch::scripting
