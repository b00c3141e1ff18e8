// The same command list over RESP (one server) and over REST (another, identical server):
// every answer must be the same, with the RESP reply turned into Upstash's JSON by a small
// converter written here, independent of the server's. A difference would mean the REST
// path runs commands differently from RESP, which it must not (one command table).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/raw_connection.h"
#include "wire/rest_fixture.h"

namespace latch::test {
namespace {

std::string Quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out + "\"";
}

// Reads one RESP2 value at `pos` as JSON (ASCII strings only: the commands below use no
// other bytes). Errors nested in arrays are strings, as in the REST answer.
std::string ToJson(const std::string& resp, std::size_t& pos) {
  const char type = resp[pos];
  const std::size_t eol = resp.find("\r\n", pos);
  const std::string line = resp.substr(pos + 1, eol - pos - 1);
  pos = eol + 2;
  switch (type) {
    case '+':
    case '-':
      return Quote(line);
    case ':':
      return line;
    case '$': {
      if (line == "-1") return "null";
      const std::size_t n = std::stoul(line);
      std::string s = resp.substr(pos, n);
      pos += n + 2;
      return Quote(s);
    }
    case '*': {
      if (line == "-1") return "null";
      std::string out = "[";
      for (long i = 0, n = std::stol(line); i < n; ++i) {
        if (i > 0) out += ",";
        out += ToJson(resp, pos);
      }
      return out + "]";
    }
  }
  return "<unexpected RESP: " + resp + ">";
}

std::string AsRestBody(const std::string& resp) {
  std::size_t pos = 0;
  if (!resp.empty() && resp[0] == '-')
    return "{\"error\":" + Quote(resp.substr(1, resp.size() - 3)) + "}";
  return "{\"result\":" + ToJson(resp, pos) + "}";
}

std::string AsJsonArray(const std::vector<std::string>& args) {
  std::string out = "[";
  for (std::size_t i = 0; i < args.size(); ++i) out += (i ? "," : "") + Quote(args[i]);
  return out + "]";
}

TEST(RestRespCompare, SameAnswersForTheSameCommands) {
  const std::vector<std::vector<std::string>> commands = {
      {"PING"},
      {"PING", "hello"},
      {"ECHO", "x y"},
      {"SET", "k", "v"},
      {"GET", "k"},
      {"GET", "missing"},
      {"SET", "k", "v2", "NX"},
      {"SET", "k", "v3", "XX", "GET"},
      {"SET", "lock", "owner", "NX", "PX", "30000"},
      {"PTTL", "lock"},
      {"TTL", "lock"},
      {"EXPIRE", "lock", "100"},
      {"PERSIST", "lock"},
      {"TTL", "lock"},
      {"EXISTS", "k", "lock", "x"},
      {"INCR", "n"},
      {"INCRBY", "n", "41"},
      {"DECR", "n"},
      {"DECRBY", "n", "2"},
      {"INCR", "k"},
      {"MSET", "a", "1", "b", "2"},
      {"MGET", "a", "b", "c"},
      {"MSETNX", "a", "3", "z", "4"},
      {"SETNX", "a", "z"},
      {"GETDEL", "b"},
      {"TYPE", "a"},
      {"TYPE", "b"},
      {"APPEND", "a", "2"},
      {"DEL", "a", "b", "c"},
      {"KEYS", "lock"},
      {"DBSIZE"},
      {"SCAN", "0", "MATCH", "lock"},
      {"EVAL", "return {1, 'two', {3}, redis.call('get', KEYS[1])}", "1", "lock"},
      {"EVAL", "return redis.status_reply('FINE')", "0"},
      {"EVAL", "return redis.error_reply('MYERR boom')", "0"},
      {"EVAL",
       "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) "
       "else return 0 end",
       "1", "lock", "owner"},
      {"LOCK.ACQUIRE", "L", "me", "10000"},
      {"LOCK.ACQUIRE", "L", "you", "10000"},
      {"LOCK.RELEASE", "L", "you"},
      {"LOCK.RELEASE", "L", "me"},
      {"NOSUCH"},
      {"GET"},
      {"SET", "k", "v", "EX", "0"},
      {"SET", "k", "v", "PX", "abc"},
      {"DELIFEQ", "k", "nope"},
      {"DIGEST", "k"},
      {"LOCK.INFO", "L"},
      {"EXPIRETIME", "k"},
      {"CONFIG", "GET", "maxclients"},
      {"COMMAND", "COUNT"},
      {"SELECT", "0"},
      {"SELECT", "1"},
      {"SELECT", "0"},  // a REST request's session starts in DB 0; the RESP one goes back there
      {"DEBUG", "SLEEP", "0"},
      {"UNLINK", "k"},
      {"FLUSHALL"},
      {"DBSIZE"},
  };
  EmbeddedServer resp_server(RestOptions());
  RestServer rest;
  RawConnection resp(resp_server.port());
  HttpConnection http(rest.port());
  for (const auto& args : commands) {
    const std::string raw = resp.CommandArgs(args);
    HttpResponse r = http.Request("POST", "/", AsJsonArray(args), {kRestAuth});
    const std::string expected = AsRestBody(raw);
    EXPECT_EQ(r.body, expected) << AsJsonArray(args) << " RESP: " << raw;
    EXPECT_EQ(r.status, raw[0] == '-' ? 400 : 200) << AsJsonArray(args);
  }
}

}  // namespace
}  // namespace latch::test
