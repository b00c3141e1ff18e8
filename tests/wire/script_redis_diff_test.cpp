// Lua-path replies of latchd compared byte for byte with a real redis-server 7.0 for a
// corpus of scripts: conversions both ways, errors (compile, runtime, redis.call/pcall),
// the sandbox and global protection, EVALSHA/SCRIPT, EVAL_RO. Each case runs on a fresh
// connection of each server, in order, so that later cases see earlier writes.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/embedded_server.h"
#include "support/raw_connection.h"
#include "support/server_process.h"

namespace latch::test {
namespace {

using Args = std::vector<std::string>;

const std::vector<Args>& Corpus() {
  static const std::vector<Args> corpus = {
      // Numbers, booleans, nil, tables.
      {"eval", "return 3.99", "0"},
      {"eval", "return -3.99", "0"},
      {"eval", "return 2^63", "0"},
      {"eval", "return 0/0", "0"},
      {"eval", "return true", "0"},
      {"eval", "return false", "0"},
      {"eval", "return nil", "0"},
      {"eval", "return function() end", "0"},
      {"eval", "return {1,2,nil,4}", "0"},
      {"eval", "return {1,'a',{2,3},true,false,{ok='x'},{err='y'}}", "0"},
      {"eval", "return {a=1}", "0"},
      {"eval", "return {ok='x', err='y'}", "0"},
      {"eval", "return {ok=5}", "0"},
      {"eval", "return {err=5}", "0"},
      {"eval", "return {err='a\r\nb'}", "0"},
      {"eval", "return {ok='a\r\nb'}", "0"},
      {"eval", "return {double=3.5}", "0"},
      {"eval", "return {map={a=1}}", "0"},
      {"eval", "return {set={a=true}}", "0"},
      {"eval", "return {big_number='123'}", "0"},
      {"eval", "return {verbatim_string={format='txt',string='hi'}}", "0"},
      {"eval", "return 'x', 'y'", "0"},
      {"eval", "return KEYS[1]..ARGV[1]..#KEYS..#ARGV", "1", "k", "a", "b"},
      {"eval", "KEYS[1] = 'x' return KEYS[1]", "1", "k"},
      // redis.call / pcall and the conversions of replies.
      {"eval", "return redis.call('set','a','b')", "0"},
      {"eval", "return type(redis.call('set','a','b'))", "0"},
      {"eval", "return redis.call('set','a','b').ok", "0"},
      {"eval", "return redis.call('get','nokey')", "0"},
      {"eval", "return type(redis.call('get','nokey'))", "0"},
      {"eval", "return {1, redis.call('ping')}", "0"},
      {"eval", "return redis.call('PiNg','x')", "0"},
      {"eval", "redis.call('set','n',3.5) return redis.call('get','n')", "0"},
      {"eval", "redis.call('set','n',1e20) return redis.call('get','n')", "0"},
      {"eval", "redis.call('set','n',-0.1) return redis.call('get','n')", "0"},
      {"eval", "redis.call('set','n',7) return redis.call('incr','n')", "0"},
      {"eval", "return redis.call('incr','a')", "0"},
      {"eval", "return redis.pcall('incr','a')", "0"},
      {"eval", "return redis.pcall('incr','a').err", "0"},
      {"eval", "return redis.call('set','n',true)", "0"},
      {"eval", "return redis.pcall('set','n',{})", "0"},
      {"eval", "return redis.call()", "0"},
      {"eval", "return redis.pcall()", "0"},
      {"eval", "return redis.call('nosuch')", "0"},
      {"eval", "return redis.pcall('nosuch')", "0"},
      {"eval", "return redis.call('get')", "0"},
      {"eval", "return redis.pcall('get','a','b')", "0"},
      {"eval", "return redis.call('eval','return 1','0')", "0"},
      {"eval", "return redis.pcall('auth','x')", "0"},
      {"eval", "return redis.call('set','a','b','c','d','e')", "0"},
      {"eval", "local ok, e = pcall(redis.call, 'incr', 'a') return e.err", "0"},
      {"eval", "redis.call('del','k1') return redis.call('exists','k1')", "0"},
      {"eval", "local ok, e = pcall(redis.call, 'nosuch') return {tostring(ok), e}", "0"},
      {"eval", "local ok, e = pcall(function() error({err='x'}) end) return {type(e), e}", "0"},
      {"eval", "local ok, e = pcall(function() error('plain') end) return e", "0"},
      {"eval", "local ok, e = pcall(function() error({1,2}) end) return type(e)", "0"},
      {"eval", "local ok, e = pcall(function() return 1, 2 end) return {tostring(ok), e}", "0"},
      {"eval", "local mt = getmetatable(_G) return type(mt.__index)", "0"},
      {"eval", "local mt = getmetatable(_G) mt.__index = nil return 1", "0"},
      {"eval", "return getmetatable(string)", "0"},
      // redis.* helpers.
      {"eval", "return redis.error_reply('My Error')", "0"},
      {"eval", "return redis.error_reply('oops')", "0"},
      {"eval", "return redis.error_reply('-FOO bar')", "0"},
      {"eval", "return redis.error_reply(5)", "0"},
      {"eval", "return redis.status_reply('FINE')", "0"},
      {"eval", "return redis.status_reply()", "0"},
      {"eval", "local t = redis.error_reply('My Error') return t.err", "0"},
      {"eval", "return redis.sha1hex('')", "0"},
      {"eval", "return redis.sha1hex(5)", "0"},
      {"eval", "return redis.sha1hex()", "0"},
      {"eval", "return {redis.LOG_DEBUG,redis.LOG_VERBOSE,redis.LOG_NOTICE,redis.LOG_WARNING}",
       "0"},
      {"eval", "return redis.log(redis.LOG_DEBUG,'hi',1)", "0"},
      {"eval", "return redis.log()", "0"},
      {"eval", "return redis.log(99,'x')", "0"},
      {"eval", "return redis.setresp(4)", "0"},
      {"eval", "redis.setresp(3) return type(redis.call('get','nokey'))", "0"},
      {"eval", "redis.setresp(3) return false", "0"},
      {"eval", "return redis.REDIS_VERSION_NUM > 0", "0"},
      {"eval", "return redis.breakpoint()", "0"},
      // Errors raised by scripts.
      {"eval", "return (", "0"},
      {"eval", "end x = 1 function f() ", "0"},
      {"eval", "error('foo')", "0"},
      {"eval", "error({err='x'})", "0"},
      {"eval", "error({err='a\nb'})", "0"},
      {"eval", "error(nil)", "0"},
      {"eval", "error(123)", "0"},
      {"eval", "error('x', 0)", "0"},
      {"eval", "return nil + 1", "0"},
      {"eval", "local t = nil return t.x", "0"},
      // Sandbox and global protection.
      {"eval", "x = 5", "0"},
      {"eval", "return y", "0"},
      {"eval", "string.x = 1 return 1", "0"},
      {"eval", "rawset(_G,'x',1) return x", "0"},
      {"eval", "setmetatable(_G, nil) return 1", "0"},
      {"eval", "return getmetatable(_G)", "0"},
      {"eval", "local f = loadstring('x = 1') f() return 1", "0"},
      {"eval", "return loadstring('return 1')()", "0"},
      {"eval", "return os.time()", "0"},
      {"eval", "return type(io)", "0"},
      {"eval", "return require('x')", "0"},
      {"eval", "return loadfile('/etc/passwd')", "0"},
      {"eval", "return dofile('/etc/passwd')", "0"},
      {"eval", "return type(debug)", "0"},
      {"eval", "return print('x')", "0"},
      {"eval", "return setfenv(1, {})", "0"},
      {"eval", "return {type(pcall), type(xpcall), type(unpack), type(select), type(coroutine)}",
       "0"},
      {"eval", "return coroutine.wrap(function() return 5 end)()", "0"},
      {"eval", "return _VERSION", "0"},
      {"eval", "return tostring(1/3)", "0"},
      {"eval", "return string.format('%d-%s', 3, 'x')", "0"},
      {"eval", "local t = {} t.x = 1 return t.x", "0"},
      {"eval", "local n = 0 for k, v in pairs(redis) do n = n + 1 end return n", "0"},
      {"eval", "return rawget(_G, 'redis') ~= nil", "0"},
      // Argument checks, EVALSHA, SCRIPT.
      {"eval", "return 1", "-1"},
      {"eval", "return 1", "2", "a"},
      {"eval", "return 1", "x"},
      {"eval", "return (", "x"},
      {"eval", "return 1"},
      {"evalsha", "abc", "0"},
      {"evalsha", "abc", "x"},
      {"evalsha", "ffffffffffffffffffffffffffffffffffffffff", "x"},
      {"evalsha", "ffffffffffffffffffffffffffffffffffffffff", "0"},
      {"script", "load", "return 1"},
      {"evalsha", "E0E1F9FABFC9D4800C877A703B823AC0578FF8DB", "0"},
      {"evalsha", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "1"},
      {"script", "exists", "E0E1F9FABFC9D4800C877A703B823AC0578FF8DB", "abc"},
      {"script", "exists"},
      {"script", "load"},
      {"script", "load", "return ("},
      {"script", "flush", "foo"},
      {"script", "flush", "sync", "x"},
      {"script", "flush", "ASYNC"},
      {"script", "exists", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db"},
      {"script", "kill"},
      {"script", "help"},
      {"script", "foo"},
      {"eval_ro", "return redis.call('set','a','b')", "0"},
      {"eval_ro", "return redis.pcall('set','a','b')", "0"},
      {"eval_ro", "return redis.call('get','a')", "0"},
      {"evalsha_ro", "abc", "0"},
      {"script", "load", "return 2"},
      {"evalsha_ro", "7f923f79fe76194c868d7e1d0820de36700eb649", "0"},
      // Library lock scripts on the Lua path of Redis and whatever path latchd takes.
      {"set", "lock", "me"},
      {"eval",
       "if redis.call(\"get\",KEYS[1]) == ARGV[1] then return redis.call(\"del\",KEYS[1]) "
       "else return 0 end",
       "1", "lock", "other"},
      {"eval",
       "if redis.call(\"get\",KEYS[1]) == ARGV[1] then return redis.call(\"del\",KEYS[1]) "
       "else return 0 end",
       "1", "lock", "me"},
      {"eval",
       "if redis.call(\"get\",KEYS[1]) == ARGV[1] then return redis.call(\"del\",KEYS[1]) "
       "else return 0 end",
       "0"},
  };
  return corpus;
}

TEST(ScriptRedisDiff, LuaRepliesMatchRedis) {
  RedisServerProcess redis;
  ASSERT_TRUE(redis.ok()) << redis.error();
  EmbeddedServer latch(EmbeddedServer::DefaultOptions(), EmbeddedServer::NowWallMs());
  RawConnection to_redis(redis.port());
  RawConnection to_latch(latch.port());
  ASSERT_TRUE(to_redis.connected()) << to_redis.error();
  ASSERT_TRUE(to_latch.connected()) << to_latch.error();
  for (const Args& args : Corpus()) {
    std::string expected = to_redis.CommandArgs(args);
    std::string got = to_latch.CommandArgs(args);
    std::string shown;
    for (const auto& a : args) shown += "'" + a + "' ";
    EXPECT_EQ(got, expected) << "command: " << shown;
  }
}

// The same corpus with a RESP3 caller (HELLO 3): nulls, booleans, doubles, maps, sets.
TEST(ScriptRedisDiff, Resp3CallerMatchesRedis) {
  RedisServerProcess redis;
  ASSERT_TRUE(redis.ok()) << redis.error();
  EmbeddedServer latch(EmbeddedServer::DefaultOptions(), EmbeddedServer::NowWallMs());
  RawConnection to_redis(redis.port());
  RawConnection to_latch(latch.port());
  to_redis.Command("HELLO", "3");
  to_latch.Command("HELLO", "3");
  const std::vector<Args> cases = {
      {"eval", "return false", "0"},
      {"eval", "return nil", "0"},
      {"eval", "return {double=3.5}", "0"},
      {"eval", "return {map={a=1}}", "0"},
      {"eval", "return {set={a=true}}", "0"},
      {"eval", "return {big_number='123'}", "0"},
      {"eval", "return {verbatim_string={format='txt',string='hi'}}", "0"},
      {"eval", "return redis.call('get','nokey')", "0"},
      {"eval", "redis.setresp(3) return redis.call('get','nokey')", "0"},
      {"eval", "redis.setresp(3) return false", "0"},
      {"eval", "redis.setresp(3) return true", "0"},
  };
  for (const Args& args : cases) {
    EXPECT_EQ(to_latch.CommandArgs(args), to_redis.CommandArgs(args)) << args[1];
  }
}

}  // namespace
}  // namespace latch::test
