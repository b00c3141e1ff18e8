// The Upstash REST protocol over real HTTP against the embedded server: every request form
// (POST / JSON, path form, /pipeline, /multi-exec), the token rules, base64 responses, the
// headers @upstash/redis sends and reads, and keep-alive. Errors and limits are in
// rest_limits_wire_test.cpp, the comparison with RESP in rest_resp_compare_test.cpp.
#include <gtest/gtest.h>

#include "support/raw_connection.h"
#include "wire/rest_fixture.h"

namespace latch::test {
namespace {

TEST(RestWire, OffUnlessConfigured) {
  EmbeddedServer server;
  EXPECT_EQ(server.server().rest_port(), 0);
}

TEST(RestWire, PostJsonCommand) {
  RestServer s;
  HttpResponse r = s.Post("/", R"(["SET","k","v","PX",10000,"NX"])");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body, R"({"result":"OK"})");
  EXPECT_EQ(r.header("content-type"), "application/json");
  EXPECT_EQ(s.Post("/", R"(["GET","k"])").body, R"({"result":"v"})");
  EXPECT_EQ(s.Post("/", R"(["SET","k","w","NX"])").body, R"({"result":null})");
  EXPECT_EQ(s.Post("/", R"(["INCR","n"])").body, R"({"result":1})");
  EXPECT_EQ(s.Post("/", R"(["MGET","k","nokey","n"])").body, R"({"result":["v",null,"1"]})");
  // JSON escapes are decoded into the bytes stored, and written back escaped.
  EXPECT_EQ(s.Post("/", R"(["SET","e","a\"b\\c\n\u00e9\ud83d\ude00"])").status, 200);
  EXPECT_EQ(s.Post("/", R"(["GET","e"])").body,
            "{\"result\":\"a\\\"b\\\\c\\n\xC3\xA9\xF0\x9F\x98\x80\"}");
  // Numbers keep their text; booleans are words, as @upstash/redis sends them.
  EXPECT_EQ(s.Post("/", R"(["SET","f",1.50e3])").status, 200);
  EXPECT_EQ(s.Post("/", R"(["GET","f"])").body, R"({"result":"1.50e3"})");
  EXPECT_EQ(s.Post("/", R"( [ "SET" , "b" , true ] )").status, 200);
  EXPECT_EQ(s.Post("/", R"(["GET","b"])").body, R"({"result":"true"})");
}

TEST(RestWire, PathForm) {
  RestServer s;
  EXPECT_EQ(s.Get("/set/foo/bar").body, R"({"result":"OK"})");
  EXPECT_EQ(s.Get("/get/foo").body, R"({"result":"bar"})");
  EXPECT_EQ(s.Get("/GET/foo/").body, R"({"result":"bar"})") << "a trailing slash adds nothing";
  // Segments are percent-decoded ('+' stays); query parameters follow as name value.
  EXPECT_EQ(s.Get("/set/a%2Fb/x+y%20z?EX=100").body, R"({"result":"OK"})");
  EXPECT_EQ(s.Get("/get/a%2Fb").body, R"({"result":"x+y z"})");
  EXPECT_EQ(s.Get("/ttl/a%2Fb").body, R"({"result":100})");
  // POST: the body is the value (last positional argument), options in the query.
  EXPECT_EQ(s.Post("/set/doc?PX=5000&NX", R"({"a":[1,2]})").body, R"({"result":"OK"})");
  EXPECT_EQ(s.Get("/get/doc").body, R"({"result":"{\"a\":[1,2]}"})");
  EXPECT_EQ(s.Get("/pttl/doc").body, R"({"result":5000})");
  EXPECT_EQ(s.Call("PUT", "/set/p", "q").body, R"({"result":"OK"})");
  HttpResponse head = s.Call("HEAD", "/get/p");
  EXPECT_EQ(head.status, 200);
  EXPECT_EQ(head.header("content-length"), "14");
  EXPECT_EQ(head.body, "");
  EXPECT_EQ(s.Get("/get/%zz").body,
            R"({"error":"ERR invalid percent-encoding in the request URL"})");
}

TEST(RestWire, Pipeline) {
  RestServer s;
  HttpResponse r = s.Post("/pipeline", R"([["SET","a","1"],["INCR","a"],["INCR","nope","x"],
      ["SET","s","text"],["INCR","s"],["GET","a"]])");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body,
            R"([{"result":"OK"},{"result":2},)"
            R"({"error":"ERR wrong number of arguments for 'incr' command"},{"result":"OK"},)"
            R"({"error":"ERR value is not an integer or out of range"},{"result":"2"}])");
}

TEST(RestWire, MultiExecIsAtomicAndAllOrNothing) {
  RestServer s;
  HttpResponse r = s.Post("/multi-exec", R"([["SET","t","1"],["INCR","t"],["INCRBY","t","x"]])");
  EXPECT_EQ(r.status, 200);
  // A command failing at run time fails alone, as EXEC in Redis.
  EXPECT_EQ(r.body, R"([{"result":"OK"},{"result":2},)"
                    R"({"error":"ERR value is not an integer or out of range"}])");
  // A command refused while queuing discards the whole transaction.
  r = s.Post("/multi-exec", R"([["SET","t","100"],["NOSUCH","x"]])");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body, R"({"error":"EXECABORT Transaction discarded because of previous errors."})");
  EXPECT_EQ(s.Get("/get/t").body, R"({"result":"2"})");
  r = s.Post("/multi-exec", R"([["SET","t","100"],["MULTI"]])");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(s.Get("/get/t").body, R"({"result":"2"})");
}

TEST(RestWire, ConnectionStateCommandsAreRefused) {
  RestServer s;
  for (const char* cmd : {"MULTI", "exec", "WATCH", "AUTH", "HELLO", "QUIT", "RESET"}) {
    HttpResponse r = s.Post("/", std::string("[\"") + cmd + "\",\"x\"]");
    EXPECT_EQ(r.status, 400) << cmd;
    EXPECT_NE(r.body.find("is not available over REST"), std::string::npos) << r.body;
  }
}

TEST(RestWire, TokenRules) {
  RestServer s;
  const std::string unauthorized = R"({"error":"WRONGPASS invalid or missing auth token"})";
  HttpResponse r = s.Post("/", R"(["SET","k","v"])", {});
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(r.body, unauthorized);
  EXPECT_EQ(s.Post("/", R"(["SET","k","v"])", {"Authorization: Bearer nope"}).status, 401);
  EXPECT_EQ(s.Post("/", R"(["SET","k","v"])", {"Authorization: Basic dG9r"}).status, 401);
  EXPECT_EQ(s.Get("/get/k", {}).body, unauthorized);
  EXPECT_EQ(s.Get("/get/k?_token=tok", {}).body, R"({"result":null})") << "nothing was set";
  EXPECT_EQ(s.Post("/", R"(["SET","k","v"])", {"authorization: bearer tok"}).status, 200);
  // rest-token is a runtime setting.
  RawConnection resp(s.resp_port());
  EXPECT_EQ(resp.Command("CONFIG", "SET", "rest-token", "t2"), "+OK\r\n");
  EXPECT_EQ(s.Get("/get/k").status, 401);
  EXPECT_EQ(s.Get("/get/k", {"Authorization: Bearer t2"}).body, R"({"result":"v"})");
}

TEST(RestWire, WithoutRestTokenRequirepassIsTheToken) {
  Options o = RestOptions(EmbeddedServer::DefaultOptions(), "");
  o.requirepass = "pw";
  RestServer s(o);
  EXPECT_EQ(s.Get("/ping", {}).status, 401);
  EXPECT_EQ(s.Get("/ping", {"Authorization: Bearer tok"}).status, 401);
  EXPECT_EQ(s.Get("/ping", {"Authorization: Bearer pw"}).body, R"({"result":"PONG"})");
  RestServer open(RestOptions(EmbeddedServer::DefaultOptions(), ""));
  EXPECT_EQ(open.Get("/ping", {}).body, R"({"result":"PONG"})") << "no password, no token";
}

TEST(RestWire, Base64Encoding) {
  RestServer s;
  const std::vector<std::string> b64 = {kRestAuth, "Upstash-Encoding: base64"};
  EXPECT_EQ(s.Post("/", R"(["SET","k","hello"])", b64).body, R"({"result":"OK"})");
  EXPECT_EQ(s.Post("/", R"(["GET","k"])", b64).body, R"({"result":"aGVsbG8="})");
  EXPECT_EQ(s.Post("/", R"(["PING"])", b64).body, R"({"result":"UE9ORw=="})");
  EXPECT_EQ(s.Post("/", R"(["INCR","n"])", b64).body, R"({"result":1})");
  EXPECT_EQ(s.Post("/", R"(["MGET","k","x"])", b64).body, R"({"result":["aGVsbG8=",null]})");
  EXPECT_EQ(s.Post("/", R"(["INCR","k"])", b64).body,
            R"({"error":"ERR value is not an integer or out of range"})");
  // Binary values survive base64 and are replaced (U+FFFD) in plain JSON.
  EXPECT_EQ(s.Post("/set/bin", std::string("\xff\x00\x01", 3)).status, 200);
  EXPECT_EQ(s.Post("/", R"(["GET","bin"])", b64).body, R"({"result":"/wAB"})");
  EXPECT_EQ(s.Post("/", R"(["GET","bin"])").body, "{\"result\":\"\xEF\xBF\xBD\\u0000\\u0001\"}");
  EXPECT_EQ(s.Post("/pipeline", R"([["SET","a","b"],["GET","a"]])", b64).body,
            R"([{"result":"OK"},{"result":"Yg=="}])");
}

TEST(RestWire, UpstashHeaders) {
  RestServer s;
  HttpResponse r = s.Post(
      "/", R"(["SET","k","v"])",
      {kRestAuth, "upstash-sync-token: 12345", "Upstash-Telemetry-Runtime: node@v20.0.0",
       "Upstash-Telemetry-Platform: unknown", "Upstash-Telemetry-Sdk: @upstash/redis@v1.39.0"});
  EXPECT_EQ(r.status, 200);
  EXPECT_FALSE(r.header("upstash-sync-token").empty());
  // The SDK shows as the client's library, as CLIENT SETINFO would.
  HttpConnection c(s.port());
  HttpResponse list = c.Request("POST", "/", R"(["CLIENT","INFO"])",
                                {kRestAuth, "Upstash-Telemetry-Sdk: @upstash/redis@v1.39.0"});
  EXPECT_NE(list.body.find("lib-name=@upstash/redis lib-ver=v1.39.0"), std::string::npos)
      << list.body;
}

TEST(RestWire, KeepAliveAndConnectionClose) {
  RestServer s;
  HttpConnection c(s.port());
  for (int i = 1; i <= 20; ++i) {
    HttpResponse r = c.Request("POST", "/", R"(["INCR","ka"])", {kRestAuth});
    ASSERT_EQ(r.body, "{\"result\":" + std::to_string(i) + "}");
  }
  // Pipelined HTTP requests on one connection are answered in order.
  ASSERT_TRUE(c.Send(HttpRequestBytes("GET", "/get/ka", "", {kRestAuth}) +
                     HttpRequestBytes("GET", "/incr/ka", "", {kRestAuth})));
  EXPECT_EQ(c.Read()->body, R"({"result":"20"})");
  EXPECT_EQ(c.Read()->body, R"({"result":21})");
  HttpResponse last = c.Request("GET", "/ping", "", {kRestAuth, "Connection: close"});
  EXPECT_EQ(last.body, R"({"result":"PONG"})");
  EXPECT_EQ(last.header("connection"), "close");
  EXPECT_TRUE(c.WaitClosed());
}

TEST(RestWire, LocksOverRest) {
  RestServer s;
  // The article's acquire: SET NX EX, then the compare-and-delete release script.
  EXPECT_EQ(s.Post("/", R"(["SET","lock:p1","me","NX","EX",15])").body, R"({"result":"OK"})");
  EXPECT_EQ(s.Post("/", R"(["SET","lock:p1","other","NX","EX",15])").body, R"({"result":null})");
  const std::string release =
      R"(if redis.call(\"get\", KEYS[1]) == ARGV[1] then return redis.call(\"del\", KEYS[1]) )"
      R"(else return 0 end)";
  EXPECT_EQ(s.Post("/", "[\"EVAL\",\"" + release + "\",1,\"lock:p1\",\"other\"]").body,
            R"({"result":0})");
  EXPECT_EQ(s.Post("/", "[\"EVAL\",\"" + release + "\",1,\"lock:p1\",\"me\"]").body,
            R"({"result":1})");
  // latchd's own lock commands answer the same over REST; WAIT does not block here.
  EXPECT_EQ(s.Post("/", R"(["LOCK.ACQUIRE","lk","a",30000])").status, 200);
  EXPECT_EQ(s.Post("/", R"(["LOCK.ACQUIRE","lk","b",30000,"WAIT",5000])").body,
            R"({"result":null})");
}

TEST(RestWire, DirectivesInConfigGet) {
  RestServer s;
  RawConnection resp(s.resp_port());
  const std::string port = std::to_string(s.port());
  EXPECT_EQ(resp.Command("CONFIG", "GET", "rest-port"),
            "*2\r\n$9\r\nrest-port\r\n$" + std::to_string(port.size()) + "\r\n" + port + "\r\n");
  EXPECT_EQ(resp.Command("CONFIG", "GET", "rest-token"),
            "*2\r\n$10\r\nrest-token\r\n$3\r\ntok\r\n");
  EXPECT_EQ(resp.Command("CONFIG", "SET", "rest-port", "1"),
            "-ERR CONFIG SET failed (possibly related to argument 'rest-port') - can't set "
            "immutable config\r\n");
}

}  // namespace
}  // namespace latch::test
