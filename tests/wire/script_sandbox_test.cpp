// The Lua sandbox against a hostile script, over real sockets on latchd: precompiled
// bytecode is never loaded (CVE-2015-4335's class), and no script can change the string
// functions, library tables or globals that the next script of another client sees.
// (The exact replies are compared with redis-server in corpus/script_sandbox.txt.)
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/embedded_server.h"
#include "support/raw_connection.h"

namespace latch::test {
namespace {

bool IsReadonlyError(const std::string& reply) {
  return reply.rfind("-ERR ", 0) == 0 &&
         reply.find("Attempt to modify a readonly table") != std::string::npos;
}

TEST(ScriptSandbox, BytecodeIsNeverLoaded) {
  EmbeddedServer latch(EmbeddedServer::DefaultOptions(), EmbeddedServer::NowWallMs());
  RawConnection conn(latch.port());
  ASSERT_TRUE(conn.connected()) << conn.error();
  // ASSERT: on a VM that loads bytecode the fuzz below can hang the server for good.
  ASSERT_EQ(conn.Command("EVAL",
                         "local f, e = loadstring(string.dump(function() return 1 end)) "
                         "return {type(f), e}",
                         "0"),
            "*2\r\n$3\r\nnil\r\n$53\r\n[string \"\x1bLuaQ\"]:1: unexpected symbol near 'char(27)'"
            "\r\n");
  ASSERT_EQ(conn.Command("EVAL",
                         "local d = {string.dump(function() return 7 end)} local i = 0 "
                         "return type(load(function() i = i + 1 return d[i] end))",
                         "0"),
            "$3\r\nnil\r\n");
  // Every single-byte mutation of a dump (the fuzz that sent scripts into endless loops on
  // the unprotected VM) is refused by the text parser; the server keeps answering.
  const char* fuzz =
      "local d = string.dump(function(a) local s = 0 for i = 1, 10 do s = s + i end return s end) "
      "local loaded = 0 "
      "for p = 1, #d do for _, v in ipairs({0, 1, 127, 255}) do "
      "  local m = d:sub(1, p - 1) .. string.char(v) .. d:sub(p + 1) "
      "  if loadstring(m) then loaded = loaded + 1 end "
      "end end "
      "return loaded";
  EXPECT_EQ(conn.Command("EVAL", fuzz, "0"), ":0\r\n");
  EXPECT_EQ(conn.Command("PING"), "+PONG\r\n");
}

TEST(ScriptSandbox, NoScriptChangesWhatTheNextClientSees) {
  EmbeddedServer latch(EmbeddedServer::DefaultOptions(), EmbeddedServer::NowWallMs());
  RawConnection attacker(latch.port());
  RawConnection victim(latch.port());
  ASSERT_TRUE(attacker.connected()) << attacker.error();
  ASSERT_TRUE(victim.connected()) << victim.error();
  const std::vector<std::string> attacks = {
      "getmetatable('').__index.upper = function() return 'pwned' end",
      "getmetatable('').__index = {upper = function() return 'pwned' end}",
      "rawset(getmetatable(''), '__index', {upper = function() return 'pwned' end})",
      "setmetatable(getmetatable(''), {__index = function() return 'pwned' end})",
      "string.upper = function() return 'pwned' end",
      "rawset(string, 'upper', function() return 'pwned' end)",
      "table.insert(string, 'pwned')",
      "table.insert(_G, 'pwned')",
      "_G.string = {upper = function() return 'pwned' end}",
      "setmetatable(_G, {__index = function() return 'pwned' end})",
      "rawset(_G, 'cjson', {})",
      "bit.band = function() return 'pwned' end",
      "cjson.encode = function() return 'pwned' end",
      "struct.pack = nil",
      "cmsgpack.unpack = nil",
      "redis.call = function() return 'pwned' end",
  };
  for (const std::string& attack : attacks) {
    EXPECT_TRUE(IsReadonlyError(attacker.Command("EVAL", attack + " return 1", "0"))) << attack;
  }
  EXPECT_EQ(victim.Command("EVAL",
                           "return {('abc'):upper(), string.upper('d'), #string, #_G, "
                           "type(rawget(_G, 'x')), redis.call('ping')}",
                           "0"),
            "*6\r\n$3\r\nABC\r\n$1\r\nD\r\n:0\r\n:0\r\n$3\r\nnil\r\n+PONG\r\n");
  EXPECT_EQ(victim.Command("EVAL",
                           "return {cjson.encode({1}), bit.band(6, 3), struct.pack('b', 65), "
                           "cmsgpack.unpack('\\1')}",
                           "0"),
            "*4\r\n$3\r\n[1]\r\n:2\r\n$1\r\nA\r\n:1\r\n");
}

// Debian's lua-cjson counts its buffer in int: a 2 GB output ends the process and a 358 MB
// string overflows the heap. latchd refuses such values before encoding; here 200
// references to one 1 MB string (a bound of 1.2 GB: on the unguarded library a 200 MB
// reply, checked to arrive there). The server answers normally afterwards.
TEST(ScriptSandbox, CjsonRefusesOutputPastItsIntBuffer) {
  EmbeddedServer latch(EmbeddedServer::DefaultOptions(), EmbeddedServer::NowWallMs());
  RawConnection conn(latch.port(), std::chrono::milliseconds(30000));
  ASSERT_TRUE(conn.connected()) << conn.error();
  std::string reply = conn.Command(
      "EVAL",
      "local s = string.rep('x', 1024 * 1024) local t = {} for i = 1, 200 do t[i] = s end "
      "return cjson.encode(t)",
      "0");
  EXPECT_EQ(reply.substr(0, 81),
            "-ERR user_script:1: Cannot serialise: the JSON text would exceed 1073741824 bytes");
  EXPECT_EQ(conn.Command("EVAL", "return cjson.encode({cjson.decode('[1,\"a\"]')})", "0"),
            "$9\r\n[[1,\"a\"]]\r\n");
  EXPECT_EQ(conn.Command("EVAL", "return cjson.decode('[1')", "0").substr(0, 59),
            "-ERR user_script:1: Expected comma or array end but found T");
}

}  // namespace
}  // namespace latch::test
