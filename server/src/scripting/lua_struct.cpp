// The `struct` library of Redis's scripts: pack, unpack and size of binary records described
// by a format string. Written from the documented format and from redis-server 7.0.15's
// observable answers (see tests/wire/corpus/script_struct.txt), not from its source.
//
// Format: ' ' is skipped; '>' '<' set big/little endian; '!n' sets the maximum alignment
// (n a power of 2, default 8); b/B h/H i/I[n] l/L T are integers of 1, 2, 4 (or n, up to
// 32), 8 and 8 bytes (lowercase signed); f and d are float and double; 'x' is a zero byte;
// 's' a zero-terminated string; 'cn' n raw bytes ('c0': the whole string when packing, a
// length taken from the previous value when unpacking). Integers and floats are aligned to
// min(size, maximum alignment) from the start of the record; strings are not.
//
// Every function here may raise a Lua error (a longjmp): no C++ object with a destructor is
// alive across a raise.
#include <cctype>
#include <climits>
#include <cstdint>
#include <cstring>

#include "scripting/lua_bridge.h"

namespace latch::scripting {
namespace {

constexpr int kMaxIntSize = 32;
constexpr int kNativeAlign = 8;

struct Header {
  bool little = true;
  int align = 1;
};

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Reads the decimal count after an option, or `dflt` when there is none.
int ReadCount(lua_State* L, const char** fmt, int dflt) {
  if (!IsDigit(**fmt)) return dflt;
  int value = 0;
  while (IsDigit(**fmt)) {
    if (value > (INT_MAX - 9) / 10) luaL_error(L, "integral size overflow");
    value = value * 10 + (*(*fmt)++ - '0');
  }
  return value;
}

// The size of option `opt` (already consumed, its count next in *fmt); -1 for the options
// that only change the header. An unknown option raises when `strict` (pack, unpack) and
// has size 0 otherwise (size(), as Redis's library answers).
int OptionSize(lua_State* L, char opt, const char** fmt, Header* h, bool strict = true) {
  switch (opt) {
    case 'b':
    case 'B':
    case 'x':
      return 1;
    case 'h':
    case 'H':
      return 2;
    case 'l':
    case 'L':
    case 'T':
    case 'd':
      return 8;
    case 'f':
      return 4;
    case 's':
      return 0;
    case 'c':
      return ReadCount(L, fmt, 1);
    case 'i':
    case 'I': {
      int size = ReadCount(L, fmt, 4);
      if (size > kMaxIntSize) {
        luaL_error(L, "integral size %d is larger than limit of %d", size, kMaxIntSize);
      }
      return size;
    }
    case ' ':
      return -1;
    case '>':
      h->little = false;
      return -1;
    case '<':
      h->little = true;
      return -1;
    case '!': {
      int a = ReadCount(L, fmt, kNativeAlign);
      if (a <= 0 || (a & (a - 1)) != 0) luaL_error(L, "alignment %d is not a power of 2", a);
      h->align = a;
      return -1;
    }
    default: {
      if (!strict) return 0;
      char text[] = "invalid format option 'X'";
      text[sizeof(text) - 3] = opt;
      return luaL_argerror(L, 1, text);
    }
  }
}

// Padding before an option of `size` bytes at `pos`.
std::size_t Padding(char opt, int size, std::size_t pos, const Header& h) {
  if (opt == 'c' || opt == 's' || opt == 'x' || size <= 1) return 0;
  std::size_t align = static_cast<std::size_t>(size < h.align ? size : h.align);
  return (align - (pos & (align - 1))) & (align - 1);
}

// C's conversion of a double to unsigned 64 bits as x86-64 compilers emit it (and thus as
// Redis's library behaves): in range it truncates; out of range it gives what the
// truncating instruction gives (0x8000000000000000, cancelled to 0 above 2^64 or for NaN).
std::uint64_t WireInteger(double n) {
  constexpr double kTwo63 = 9223372036854775808.0;
  constexpr std::uint64_t kTopBit = 0x8000000000000000ULL;
  if (n < kTwo63) {
    if (n >= -kTwo63) return static_cast<std::uint64_t>(static_cast<std::int64_t>(n));
    return kTopBit;
  }
  double rest = n - kTwo63;
  if (rest < kTwo63) return static_cast<std::uint64_t>(static_cast<std::int64_t>(rest)) ^ kTopBit;
  return 0;  // 2^64 and above, or NaN
}

// Writes `size` bytes of `value` (low bytes first, zeros above 8 bytes) in the header's order.
void PutInteger(luaL_Buffer* b, std::uint64_t value, int size, bool little) {
  char bytes[kMaxIntSize];
  for (int i = 0; i < size; ++i) {
    bytes[i] = static_cast<char>(value & 0xff);
    value = i < 7 ? value >> 8 : 0;
  }
  for (int i = 0; i < size; ++i) luaL_addchar(b, bytes[little ? i : size - 1 - i]);
}

void PutFloat(luaL_Buffer* b, const void* raw, int size, bool little) {
  const auto* p = static_cast<const unsigned char*>(raw);  // host order is little-endian
  for (int i = 0; i < size; ++i) luaL_addchar(b, static_cast<char>(p[little ? i : size - 1 - i]));
}

int StructPack(lua_State* L) {
  const char* fmt = luaL_checkstring(L, 1);
  Header h;
  // A nil after the arguments: an option without its value reads "got nil", as in Redis.
  lua_pushnil(L);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  int arg = 2;
  std::size_t total = 0;
  while (*fmt != '\0') {
    char opt = *fmt++;
    int size = OptionSize(L, opt, &fmt, &h);
    if (size < 0) continue;
    for (std::size_t pad = Padding(opt, size, total, h); pad > 0; --pad, ++total) {
      luaL_addchar(&b, '\0');
    }
    switch (opt) {
      case 'x':
        luaL_addchar(&b, '\0');
        break;
      case 'f': {
        float f = static_cast<float>(luaL_checknumber(L, arg++));
        PutFloat(&b, &f, 4, h.little);
        break;
      }
      case 'd': {
        double d = luaL_checknumber(L, arg++);
        PutFloat(&b, &d, 8, h.little);
        break;
      }
      case 's':
      case 'c': {
        std::size_t len = 0;
        const char* s = luaL_checklstring(L, arg++, &len);
        if (opt == 's') {
          size = static_cast<int>(len + 1);
          luaL_addlstring(&b, s, len + 1);  // with its terminating zero
          break;
        }
        if (size == 0) size = static_cast<int>(len);
        luaL_argcheck(L, len >= static_cast<std::size_t>(size), arg, "string too short");
        luaL_addlstring(&b, s, static_cast<std::size_t>(size));
        break;
      }
      default:
        PutInteger(&b, WireInteger(luaL_checknumber(L, arg++)), size, h.little);
    }
    total += static_cast<std::size_t>(size);
  }
  luaL_pushresult(&b);
  return 1;
}

int StructSize(lua_State* L) {
  const char* fmt = luaL_checkstring(L, 1);
  Header h;
  std::size_t total = 0;
  while (*fmt != '\0') {
    char opt = *fmt++;
    int size = OptionSize(L, opt, &fmt, &h, false);
    if (size < 0) continue;
    if (opt == 's') luaL_argerror(L, 1, "option 's' has no fixed size");
    if (opt == 'c' && size == 0) luaL_argerror(L, 1, "option 'c0' has no fixed size");
    total += Padding(opt, size, total, h) + static_cast<std::size_t>(size);
  }
  lua_pushnumber(L, static_cast<lua_Number>(total));
  return 1;
}

lua_Number GetInteger(const char* p, int size, bool little, bool is_signed) {
  std::uint64_t value = 0;
  for (int i = 0; i < size; ++i) {
    value = (value << 8) | static_cast<unsigned char>(p[little ? size - 1 - i : i]);
  }
  if (!is_signed) return static_cast<lua_Number>(value);
  if (size < 8) {
    std::uint64_t sign = std::uint64_t{1} << (size * 8 - 1);
    if (value & sign) value |= ~((sign << 1) - 1);
  }
  return static_cast<lua_Number>(static_cast<std::int64_t>(value));
}

void GetFloat(const char* p, void* out, int size, bool little) {
  auto* o = static_cast<unsigned char*>(out);
  for (int i = 0; i < size; ++i) o[little ? i : size - 1 - i] = static_cast<unsigned char>(p[i]);
}

// unpack(fmt, data [, offset]): the values, then the offset after them (1-based).
int StructUnpack(lua_State* L) {
  const char* fmt = luaL_checkstring(L, 1);
  std::size_t len = 0;
  const char* data = luaL_checklstring(L, 2, &len);
  lua_Integer offset = luaL_optinteger(L, 3, 1);
  luaL_argcheck(L, offset != 0, 3, "offset must be 1 or greater");
  // A negative offset is a position past any data: every read of it is "too short".
  std::size_t pos = static_cast<std::size_t>(offset) - 1;
  Header h;
  int results = 0;
  lua_settop(L, 2);
  while (*fmt != '\0') {
    char opt = *fmt++;
    int size = OptionSize(L, opt, &fmt, &h);
    if (size < 0) continue;
    if (opt == 'c' && size == 0) {
      if (results == 0 || !lua_isnumber(L, -1)) luaL_error(L, "format 'c0' needs a previous size");
      lua_Number n = lua_tonumber(L, -1);
      size = n >= 0 && n <= INT_MAX ? static_cast<int>(n) : -1;  // -1: "too short" below
      lua_pop(L, 1);
      --results;
    }
    pos += Padding(opt, size, pos, h);
    std::size_t need = size < 0 ? SIZE_MAX : static_cast<std::size_t>(size);
    luaL_argcheck(L, pos <= len && need <= len - pos, 2, "data string too short");
    luaL_checkstack(L, 2, "too many results");
    const char* p = data + pos;
    switch (opt) {
      case 'x':
        pos += 1;
        continue;
      case 'f': {
        float f = 0;
        GetFloat(p, &f, 4, h.little);
        lua_pushnumber(L, f);
        break;
      }
      case 'd': {
        double d = 0;
        GetFloat(p, &d, 8, h.little);
        lua_pushnumber(L, d);
        break;
      }
      case 's': {
        const void* end = std::memchr(p, '\0', len - pos);
        if (end == nullptr) luaL_error(L, "unfinished string in data");
        size = static_cast<int>(static_cast<const char*>(end) - p + 1);
        lua_pushlstring(L, p, static_cast<std::size_t>(size - 1));
        break;
      }
      case 'c':
        lua_pushlstring(L, p, static_cast<std::size_t>(size));
        break;
      default:
        lua_pushnumber(L, GetInteger(p, size, h.little, std::islower(opt) != 0));
    }
    ++results;
    pos += static_cast<std::size_t>(size);
  }
  lua_pushnumber(L, static_cast<lua_Number>(static_cast<std::int64_t>(pos) + 1));
  return results + 1;
}

}  // namespace

void PushStructLib(lua_State* L) {
  lua_newtable(L);
  lua_pushcfunction(L, StructPack);
  lua_setfield(L, -2, "pack");
  lua_pushcfunction(L, StructUnpack);
  lua_setfield(L, -2, "unpack");
  lua_pushcfunction(L, StructSize);
  lua_setfield(L, -2, "size");
}

}  // namespace latch::scripting
