// The REST endpoint's errors and limits over real HTTP: malformed JSON, wrong shapes, HTTP
// methods, oversized bodies, arguments and headers, the pre-token body bound, idle
// timeouts, maxclients, and a server that keeps serving RESP and REST through all of it.
#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <thread>

#include "support/raw_connection.h"
#include "support/wire_expect.h"
#include "wire/rest_fixture.h"

namespace latch::test {
namespace {

std::string ErrorBody(const std::string& message) { return "{\"error\":\"" + message + "\"}"; }

TEST(RestLimits, CommandErrorsAreRedisErrorsWith400) {
  RestServer s;
  HttpResponse r = s.Post("/", R"(["NOSUCH","a"])");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body, ErrorBody("ERR unknown command 'NOSUCH', with args beginning with: 'a' "));
  EXPECT_EQ(s.Post("/", R"(["GET"])").body,
            ErrorBody("ERR wrong number of arguments for 'get' command"));
  EXPECT_EQ(s.Get("/set/k/v/EX/0").body, ErrorBody("ERR invalid expire time in 'set' command"));
}

TEST(RestLimits, MalformedJsonAndWrongShapes) {
  RestServer s;
  const std::string command_shape =
      "ERR the request body must be a JSON array of strings and numbers, e.g. "
      "[\\\"SET\\\",\\\"key\\\",\\\"value\\\"]";
  const std::pair<std::string, std::string> cases[] = {
      {R"(["SET","k")",
       "ERR invalid JSON in the request body at byte 10: unexpected end of "
       "the body"},
      {R"(["SET" "k"])", "ERR invalid JSON in the request body at byte 7: expected ',' or ']'"},
      {R"(["SET","k\x"])",
       "ERR invalid JSON in the request body at byte 10: invalid escape "
       "in a string"},
      {R"(["SET",01])", "ERR invalid JSON in the request body at byte 8: expected ',' or ']'"},
      {R"(["SET","k",nul])",
       "ERR invalid JSON in the request body at byte 11: expected a "
       "string, a number or a boolean"},
      {R"(["GET","k"] x)",
       "ERR invalid JSON in the request body at byte 12: unexpected data "
       "after the JSON value"},
      {"[\"GET\",\"a\x01\"]",
       "ERR invalid JSON in the request body at byte 9: control "
       "character in a string"},
      {R"({"cmd":"GET"})", command_shape},
      {R"("GET")", command_shape},
      {R"(["SET","k",null])", command_shape},
      {R"(["SET","k",["v"]])", command_shape},
      {R"(["SET","k",{"v":1}])", command_shape},
      {R"([])", "ERR empty command"},
  };
  for (const auto& [body, error] : cases) {
    HttpResponse r = s.Post("/", body);
    EXPECT_EQ(r.status, 400) << body;
    EXPECT_EQ(r.body, ErrorBody(error)) << body;
  }
  const std::string list_shape =
      "ERR the request body must be a JSON array of commands, e.g. "
      "[[\\\"SET\\\",\\\"key\\\",\\\"value\\\"],[\\\"GET\\\",\\\"key\\\"]]";
  for (const char* body : {R"(["GET","k"])", R"([["GET","k"],"x"])", R"([["GET",["k"]]])"}) {
    EXPECT_EQ(s.Post("/pipeline", body).body, ErrorBody(list_shape)) << body;
    EXPECT_EQ(s.Post("/multi-exec", body).body, ErrorBody(list_shape)) << body;
  }
  EXPECT_EQ(s.Post("/pipeline", "[]").body, ErrorBody("ERR empty command"));
  EXPECT_EQ(s.Post("/pipeline", R"([["GET","k"],[]])").body, ErrorBody("ERR empty command"));
  EXPECT_EQ(s.Post("/", "").status, 400);
  EXPECT_EQ(s.Get("/").status, 400);
  // Nothing above ran a command.
  EXPECT_EQ(s.Get("/dbsize").body, R"({"result":0})");
}

// Bodies mangled at random (bytes flipped, cut, duplicated) get a JSON answer, 200 or 400,
// on the same keep-alive connection: never a crash, a hang or a closed connection.
TEST(RestLimits, MangledBodiesGetAnAnswer) {
  RestServer s;
  HttpConnection c(s.port());
  const std::string valid =
      R"([["SET","k\u00e9\n",12.5e1,true],["MGET","a","b"],["EVAL","return 1",0]])";
  std::mt19937 rng(20261201);
  const std::string alphabet = "[]{},:\"\\u0123456789eE+-.tfnrl \x01\xff";
  for (int i = 0; i < 300; ++i) {
    std::string body = valid;
    for (int edits = 1 + static_cast<int>(rng() % 4); edits > 0; --edits) {
      const std::size_t at = rng() % body.size();
      switch (rng() % 3) {
        case 0:
          body[at] = alphabet[rng() % alphabet.size()];
          break;
        case 1:
          body.erase(at, 1 + rng() % 8);
          break;
        default:
          body.insert(at, body.substr(at, rng() % 8));
          break;
      }
      if (body.empty()) body = "[";
    }
    for (const char* target : {"/pipeline", "/", "/multi-exec"}) {
      HttpResponse r = c.Request("POST", target, body, {kRestAuth});
      ASSERT_TRUE(r.status == 200 || r.status == 400)
          << r.status << " " << r.body << " for " << body;
      ASSERT_EQ(r.body.front(), r.status == 200 && std::string(target) != "/" ? '[' : '{')
          << r.body;
    }
  }
  EXPECT_EQ(c.Request("GET", "/ping", "", {kRestAuth}).body, R"({"result":"PONG"})");
}

// The request arrives one byte per write: the parser resumes wherever a read ends.
TEST(RestLimits, RequestSplitAtEveryByte) {
  RestServer s;
  HttpConnection c(s.port());
  const std::string request =
      HttpRequestBytes("POST", "/pipeline", R"([["SET","k","v"],["GET","k"]])", {kRestAuth});
  for (char byte : request) {
    ASSERT_TRUE(c.Send(std::string(1, byte)));
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  std::optional<HttpResponse> r = c.Read();
  ASSERT_TRUE(r) << c.error();
  EXPECT_EQ(r->body, R"([{"result":"OK"},{"result":"v"}])");
}

TEST(RestLimits, MethodsOtherThanGetHeadPostPutAre405) {
  RestServer s;
  HttpResponse r = s.Call("DELETE", "/del/k");
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(r.header("allow"), "GET, HEAD, POST, PUT");
  EXPECT_EQ(r.body, ErrorBody("ERR HTTP method not allowed: use GET, HEAD, POST or PUT"));
}

Options SmallLimits() {
  Options o = RestOptions();
  o.proto_max_bulk_len = 1024 * 1024;
  o.client_query_buffer_limit = 2 * 1024 * 1024;
  return o;
}

TEST(RestLimits, ArgumentLongerThanProtoMaxBulkLen) {
  RestServer s(SmallLimits());
  const std::string big(1024 * 1024 + 1, 'x');
  const std::string error = ErrorBody("ERR Protocol error: invalid bulk length");
  EXPECT_EQ(s.Post("/", "[\"SET\",\"k\",\"" + big + "\"]").body, error);
  EXPECT_EQ(s.Post("/set/k", big).body, error);
  EXPECT_EQ(s.Post("/pipeline", "[[\"SET\",\"k\",\"" + big + "\"]]").body, error);
  const std::string fits(1024 * 1024, 'y');
  EXPECT_EQ(s.Post("/", "[\"SET\",\"k\",\"" + fits + "\"]").body, R"({"result":"OK"})");
  EXPECT_EQ(s.Get("/get/k").body, "{\"result\":\"" + fits + "\"}");
}

TEST(RestLimits, BodyLargerThanClientQueryBufferLimitIs413AndClosed) {
  RestServer s(SmallLimits());
  HttpConnection c(s.port());
  const std::string body(2 * 1024 * 1024 + 1, 'x');
  ASSERT_TRUE(c.Send(HttpRequestBytes(
      "POST", "/set/k", "", {kRestAuth, "Content-Length: " + std::to_string(body.size())})));
  std::optional<HttpResponse> r = c.Read();
  ASSERT_TRUE(r) << c.error();
  EXPECT_EQ(r->status, 413);
  EXPECT_EQ(r->body, ErrorBody("ERR request body larger than client-query-buffer-limit "
                               "(2097152 bytes)"));
  EXPECT_EQ(r->header("connection"), "close");
  EXPECT_TRUE(c.WaitClosed());
  EXPECT_EQ(s.Get("/ping").body, R"({"result":"PONG"})");
}

TEST(RestLimits, BeforeTheTokenABodyIsBoundedAt16KiB) {
  RestServer s;
  // A small body is read and answered 401 on a connection that stays open.
  HttpConnection c(s.port());
  HttpResponse r = c.Request("POST", "/", std::string(16 * 1024 - 8, ' ') + "[\"PING\"]", {});
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(c.Request("POST", "/", "[\"PING\"]", {kRestAuth}).body, R"({"result":"PONG"})");
  // A larger one is not read: 401 and the connection is closed.
  HttpConnection big(s.port());
  ASSERT_TRUE(big.Send(HttpRequestBytes("POST", "/", "", {"Content-Length: 1000000"})));
  std::optional<HttpResponse> refused = big.Read();
  ASSERT_TRUE(refused) << big.error();
  EXPECT_EQ(refused->status, 401);
  EXPECT_TRUE(big.WaitClosed());
}

TEST(RestLimits, HeaderLargerThan64KiBIs431) {
  RestServer s;
  HttpConnection c(s.port());
  ASSERT_TRUE(
      c.Send(HttpRequestBytes("GET", "/set/k/" + std::string(70 * 1024, 'v'), "", {kRestAuth})));
  std::optional<HttpResponse> r = c.Read();
  ASSERT_TRUE(r) << c.error();
  EXPECT_EQ(r->status, 431);
  EXPECT_TRUE(c.WaitClosed());
}

TEST(RestLimits, MalformedHttpIs400AndClosed) {
  RestServer s;
  HttpConnection c(s.port());
  ASSERT_TRUE(c.Send("GET / HTTP/1.1\r\nHost: t\r\nContent-Length: x\r\n\r\n"));
  std::optional<HttpResponse> r = c.Read();
  ASSERT_TRUE(r) << c.error();
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(r->body.find("ERR malformed HTTP request"), std::string::npos) << r->body;
  EXPECT_TRUE(c.WaitClosed());
  HttpConnection garbage(s.port());
  ASSERT_TRUE(garbage.Send(std::string("\x00\x01\x02 nonsense\r\n\r\n", 17)));
  EXPECT_TRUE(garbage.WaitClosed());
  EXPECT_EQ(s.Get("/ping").body, R"({"result":"PONG"})");
}

TEST(RestLimits, Expect100Continue) {
  RestServer s;
  HttpConnection c(s.port());
  ASSERT_TRUE(c.Send(
      HttpRequestBytes("POST", "/", "", {kRestAuth, "Expect: 100-continue", "Content-Length: 8"})));
  std::optional<HttpResponse> cont = c.Read(true);
  ASSERT_TRUE(cont) << c.error();
  EXPECT_EQ(cont->status, 100);
  ASSERT_TRUE(c.Send("[\"PING\"]"));
  EXPECT_EQ(c.Read()->body, R"({"result":"PONG"})");
}

TEST(RestLimits, IdleConnectionsAreClosedAfterTimeout) {
  Options o = RestOptions();
  o.timeout = 1;
  RestServer s(o);
  HttpConnection c(s.port(), std::chrono::seconds(4));
  EXPECT_EQ(c.Request("GET", "/ping", "", {kRestAuth}).body, R"({"result":"PONG"})");
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(c.WaitClosed());
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(900));
  // A request that never finishes its header is cut off the same way.
  HttpConnection slow(s.port(), std::chrono::seconds(4));
  ASSERT_TRUE(slow.Send("POST / HTTP/1.1\r\nHost: t\r\n"));
  EXPECT_TRUE(slow.WaitClosed());
}

TEST(RestLimits, MaxclientsCountsRestConnections) {
  Options o = RestOptions();
  o.maxclients = 1;
  RestServer s(o);
  HttpConnection first(s.port());
  EXPECT_EQ(first.Request("GET", "/ping", "", {kRestAuth}).status, 200);
  HttpConnection second(s.port());
  std::optional<HttpResponse> r = second.Read();
  ASSERT_TRUE(r) << second.error();
  EXPECT_EQ(r->status, 503);
  EXPECT_EQ(r->body, ErrorBody("ERR max number of clients reached"));
  RawConnection resp(s.resp_port());
  std::string trailing;
  EXPECT_TRUE(resp.WaitClosed(&trailing));
  EXPECT_EQ(trailing, "-ERR max number of clients reached\r\n");
}

TEST(RestLimits, ShutdownOverRestStopsTheServer) {
  RestServer s;
  HttpConnection idle(s.port());
  HttpConnection c(s.port());
  HttpResponse r = c.Request("POST", "/", R"(["SHUTDOWN"])", {kRestAuth});
  // The answer races with the close of every connection: OK when it wins.
  if (r.status != 0) {
    EXPECT_EQ(r.body, R"({"result":"OK"})");
  }
  s.server.server().wait();  // returns once the listeners are closed
  EXPECT_TRUE(idle.WaitClosed());
  HttpConnection after(s.port());
  EXPECT_FALSE(after.connected());
}

TEST(RestLimits, StopWithOpenSessionsDoesNotHang) {
  auto s = std::make_unique<RestServer>();
  HttpConnection idle(s->port());
  HttpConnection mid(s->port());
  // The session is in the body, mid-request, once INFO's input count has grown by the
  // header (counted as it is parsed; each INFO request counts itself too).
  RawConnection admin(s->resp_port());
  const std::int64_t info_bytes =
      static_cast<std::int64_t>(RawConnection::Encode({"INFO", "stats"}).size());
  auto read_bytes = [&] { return std::stoll(InfoField(admin, "stats", "total_net_input_bytes")); };
  const std::int64_t before = read_bytes();
  const std::string header = "POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\n";
  ASSERT_TRUE(mid.Send(header + "[\"PI"));
  std::int64_t asked = 0;
  ASSERT_TRUE(Eventually([&] {
    ++asked;
    return read_bytes() - before - asked * info_bytes >= static_cast<std::int64_t>(header.size());
  }));
  const auto start = std::chrono::steady_clock::now();
  s.reset();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
  EXPECT_TRUE(idle.WaitClosed());
  EXPECT_TRUE(mid.WaitClosed());
}

}  // namespace
}  // namespace latch::test
