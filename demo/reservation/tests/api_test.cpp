// The API end to end over real HTTP: the reservation life cycle, hold expiry and bad input.
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "demo_fixture.h"

namespace latch::demo::test {
namespace {

using std::chrono::milliseconds;
using SteadyClock = std::chrono::steady_clock;

class ApiTest : public DemoTest {};

std::string Path(std::int64_t id, const std::string& suffix = "") {
  return std::to_string(id) + suffix;
}

std::vector<std::int64_t> SeatsOf(const boost::json::value& v) {
  std::vector<std::int64_t> out;
  if (!v.is_object() || !v.as_object().contains("seats")) return out;
  for (const auto& s : v.at("seats").as_array()) out.push_back(s.as_int64());
  return out;
}

TEST_P(ApiTest, ReserveConfirmCancelLifeCycle) {
  int port = StartService();
  ASSERT_NE(port, 0);

  HttpReply health = HttpCall(port, "GET", "/health");
  EXPECT_EQ(health.status, 200) << health.body;
  EXPECT_EQ(health.body, R"({"status":"ok","postgres":"ok","lock_server":"ok"})");

  std::int64_t event = CreateEvent(port, 10);
  ASSERT_GT(event, 0);
  HttpReply info = HttpCall(port, "GET", "/events/" + Path(event));
  ASSERT_EQ(info.status, 200) << info.body;
  EXPECT_EQ(IntField(ParseJson(info.body), "seats"), 10);
  EXPECT_EQ(IntField(ParseJson(info.body), "available"), 10);

  // Seats are listed in any order and come back sorted.
  HttpReply held = Reserve(port, event, "alice", {3, 1});
  ASSERT_EQ(held.status, 201) << held.body;
  auto r = ParseJson(held.body);
  const std::int64_t id = IntField(r, "id");
  EXPECT_GT(id, 0);
  EXPECT_EQ(StringField(r, "status"), "held");
  EXPECT_EQ(StringField(r, "user"), "alice");
  EXPECT_EQ(IntField(r, "event_id"), event);
  EXPECT_EQ(SeatsOf(r), (std::vector<std::int64_t>{1, 3}));
  EXPECT_EQ(StringField(r, "hold_expires_at").size(), 24u) << held.body;  // ISO 8601, ms, Z

  HttpReply seats = HttpCall(port, "GET", "/events/" + Path(event, "/seats?limit=5&offset=1"));
  ASSERT_EQ(seats.status, 200) << seats.body;
  EXPECT_EQ(IntField(ParseJson(seats.body), "available"), 8);
  EXPECT_EQ(SeatsOf(ParseJson(seats.body)), (std::vector<std::int64_t>{4, 5, 6, 7, 8}));

  HttpReply taken = Reserve(port, event, "bob", {2, 3});
  EXPECT_EQ(taken.status, 409) << taken.body;
  EXPECT_EQ(ErrorCodeOf(taken), "seat_taken");
  // All or nothing: seat 2 was not kept for bob.
  EXPECT_EQ(QueryInt("SELECT count(*) FROM seats WHERE status = 'available'"), 8);

  HttpReply confirmed = HttpCall(port, "POST", "/reservations/" + Path(id, "/confirm"));
  ASSERT_EQ(confirmed.status, 200) << confirmed.body;
  EXPECT_EQ(StringField(ParseJson(confirmed.body), "status"), "confirmed");
  HttpReply again = HttpCall(port, "POST", "/reservations/" + Path(id, "/confirm"));
  EXPECT_EQ(again.status, 200) << again.body;  // already confirmed: answered unchanged
  HttpReply read = HttpCall(port, "GET", "/reservations/" + Path(id));
  ASSERT_EQ(read.status, 200);
  EXPECT_EQ(StringField(ParseJson(read.body), "status"), "confirmed");
  EXPECT_EQ(QueryInt("SELECT count(*) FROM seats WHERE status = 'confirmed'"), 2);

  HttpReply cancelled = HttpCall(port, "POST", "/reservations/" + Path(id, "/cancel"));
  ASSERT_EQ(cancelled.status, 200) << cancelled.body;
  EXPECT_EQ(StringField(ParseJson(cancelled.body), "status"), "cancelled");
  EXPECT_EQ(HttpCall(port, "POST", "/reservations/" + Path(id, "/cancel")).status, 200);
  HttpReply reconfirm = HttpCall(port, "POST", "/reservations/" + Path(id, "/confirm"));
  EXPECT_EQ(reconfirm.status, 409);
  EXPECT_EQ(ErrorCodeOf(reconfirm), "invalid_state");

  info = HttpCall(port, "GET", "/events/" + Path(event));
  EXPECT_EQ(IntField(ParseJson(info.body), "available"), 10);
  HttpReply bob = Reserve(port, event, "bob", {1});
  EXPECT_EQ(bob.status, 201) << bob.body;

  // Seat 1: reserved, confirmed, freed, reserved again: four versions. The fence holds the
  // fencing token of the last lock when the server hands them out (latchd), else 0.
  EXPECT_EQ(QueryInt("SELECT version FROM seats WHERE seat_no = 1"), 4);
  std::int64_t fence = QueryInt("SELECT fence FROM seats WHERE seat_no = 1");
  if (latchd()) {
    EXPECT_GT(fence, 0);
  } else {
    EXPECT_EQ(fence, 0);
  }
  // Every lock was released after its request.
  EXPECT_EQ(HttpCall(port, "GET", "/events/" + Path(event)).status, 200);
  EXPECT_EQ(Reserve(port, event, "carol", {2}).status, 201);
}

TEST_P(ApiTest, HoldExpiresOnReadAndBySweep) {
  ServiceOptions options = Options();
  options.hold = milliseconds(300);
  int port = StartService(options);  // no sweeper: holds expire when read
  ASSERT_NE(port, 0);
  std::int64_t event = CreateEvent(port, 5);
  ASSERT_GT(event, 0);
  HttpReply held = Reserve(port, event, "alice", {1, 2});
  ASSERT_EQ(held.status, 201) << held.body;
  const std::int64_t id = IntField(ParseJson(held.body), "id");

  std::string status;
  const auto deadline = SteadyClock::now() + std::chrono::seconds(10);
  while (SteadyClock::now() < deadline) {
    status =
        StringField(ParseJson(HttpCall(port, "GET", "/reservations/" + Path(id)).body), "status");
    if (status != "held") break;
    std::this_thread::sleep_for(milliseconds(25));
  }
  EXPECT_EQ(status, "expired");
  EXPECT_EQ(QueryInt("SELECT count(*) FROM seats WHERE status = 'available'"), 5);
  HttpReply late = HttpCall(port, "POST", "/reservations/" + Path(id, "/confirm"));
  EXPECT_EQ(late.status, 409) << late.body;
  EXPECT_EQ(ErrorCodeOf(late), "invalid_state");
  EXPECT_EQ(Reserve(port, event, "bob", {2}).status, 201);

  // A second instance with a sweeper expires holds that nobody reads.
  options.sweep_interval = milliseconds(50);
  int sweeping = StartService(options);
  ASSERT_NE(sweeping, 0);
  HttpReply second = Reserve(sweeping, event, "carol", {4});
  ASSERT_EQ(second.status, 201) << second.body;
  const std::string second_id = std::to_string(IntField(ParseJson(second.body), "id"));
  std::int64_t expired = 0;
  const auto sweep_deadline = SteadyClock::now() + std::chrono::seconds(10);
  while (SteadyClock::now() < sweep_deadline) {
    expired = QueryInt("SELECT count(*) FROM reservations WHERE status = 'expired' AND id = " +
                       second_id);
    if (expired == 1) break;
    std::this_thread::sleep_for(milliseconds(25));
  }
  EXPECT_EQ(expired, 1);
  EXPECT_EQ(QueryInt("SELECT count(*) FROM seats WHERE seat_no = 4 AND status = 'available'"), 1);
}

struct BadCase {
  const char* what;
  std::string method;
  std::string target;  // "{event}" is replaced
  std::string body;
  int status;
  const char* error;
  Headers headers = {};
};

TEST_P(ApiTest, BadInputGetsJsonErrorsAndTheServiceKeepsServing) {
  int port = StartService();
  ASSERT_NE(port, 0);
  std::int64_t event = CreateEvent(port, 10);
  ASSERT_GT(event, 0);
  const std::string reserve = "/events/{event}/reservations";
  std::string deep(100, '[');
  deep += std::string(100, ']');
  const std::vector<BadCase> cases = {
      {"malformed JSON", "POST", "/events", R"({"name": "x", "seats": )", 400, "bad_request"},
      {"not an object", "POST", "/events", R"(["x", 3])", 400, "bad_request"},
      {"empty body", "POST", "/events", "", 400, "bad_request"},
      {"missing seats", "POST", "/events", R"({"name":"x"})", 400, "bad_request"},
      {"name not a string", "POST", "/events", R"({"name":5,"seats":3})", 400, "bad_request"},
      {"seats a string", "POST", "/events", R"({"name":"x","seats":"3"})", 400, "bad_request"},
      {"seats fractional", "POST", "/events", R"({"name":"x","seats":1.5})", 400, "bad_request"},
      {"seats zero", "POST", "/events", R"({"name":"x","seats":0})", 400, "bad_request"},
      {"seats too many", "POST", "/events", R"({"name":"x","seats":1000001})", 400, "bad_request"},
      {"seats huge", "POST", "/events", R"({"name":"x","seats":1e300})", 400, "bad_request"},
      {"deep nesting", "POST", "/events", deep, 400, "bad_request"},
      {"invalid UTF-8", "POST", "/events", "{\"name\":\"\xff\",\"seats\":3}", 400, "bad_request"},
      {"reserve: no user", "POST", reserve, R"({"seats":[1]})", 400, "bad_request"},
      {"reserve: empty user", "POST", reserve, R"({"user":"","seats":[1]})", 400, "bad_request"},
      {"reserve: NUL in user", "POST", reserve, R"({"user":"a\u0000b","seats":[1]})", 400,
       "bad_request"},
      {"event: NUL in name", "POST", "/events", R"({"name":"a\u0000","seats":1})", 400,
       "bad_request"},
      {"reserve: seats not array", "POST", reserve, R"({"user":"a","seats":1})", 400,
       "bad_request"},
      {"reserve: seat a string", "POST", reserve, R"({"user":"a","seats":["1"]})", 400,
       "bad_request"},
      {"reserve: no seats", "POST", reserve, R"({"user":"a","seats":[]})", 400, "bad_request"},
      {"reserve: duplicate seat", "POST", reserve, R"({"user":"a","seats":[1,1]})", 400,
       "bad_request"},
      {"reserve: seat 0", "POST", reserve, R"({"user":"a","seats":[0]})", 400, "bad_request"},
      {"reserve: negative seat", "POST", reserve, R"({"user":"a","seats":[-4]})", 400,
       "bad_request"},
      {"reserve: seat beyond int64", "POST", reserve,
       R"({"user":"a","seats":[99999999999999999999999]})", 400, "bad_request"},
      {"reserve: too many seats", "POST", reserve,
       R"({"user":"a","seats":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21]})", 400,
       "bad_request"},
      {"reserve: unknown seat", "POST", reserve, R"({"user":"a","seats":[11]})", 404, "not_found"},
      {"reserve: unknown event", "POST", "/events/987654/reservations",
       R"({"user":"a","seats":[1]})", 404, "not_found"},
      {"reserve: empty idempotency key",
       "POST",
       reserve,
       R"({"user":"a","seats":[1]})",
       400,
       "bad_request",
       {{"Idempotency-Key", ""}}},
      {"bad event id", "GET", "/events/abc", "", 400, "bad_request"},
      {"negative event id", "GET", "/events/-1", "", 400, "bad_request"},
      {"event id too long", "GET", "/events/123456789012345678901234567890", "", 400,
       "bad_request"},
      {"unknown event", "GET", "/events/987654", "", 404, "not_found"},
      {"bad reservation id", "GET", "/reservations/0", "", 400, "bad_request"},
      {"unknown reservation", "GET", "/reservations/987654", "", 404, "not_found"},
      {"confirm unknown", "POST", "/reservations/987654/confirm", "", 404, "not_found"},
      {"bad limit", "GET", "/events/{event}/seats?limit=0", "", 400, "bad_request"},
      {"limit too big", "GET", "/events/{event}/seats?limit=10001", "", 400, "bad_request"},
      {"unknown endpoint", "GET", "/nope", "", 404, "not_found"},
      {"wrong method", "DELETE", "/events", "", 405, "method_not_allowed"},
      {"huge body", "POST", "/events", std::string(200 * 1024, 'x'), 413, "payload_too_large"},
  };
  for (const BadCase& c : cases) {
    std::string target = c.target;
    if (auto at = target.find("{event}"); at != std::string::npos) {
      target.replace(at, 7, std::to_string(event));
    }
    HttpReply reply = HttpCall(port, c.method, target, c.body, c.headers);
    EXPECT_EQ(reply.status, c.status) << c.what << ": " << reply.error << reply.body;
    EXPECT_EQ(ErrorCodeOf(reply), c.error) << c.what << ": " << reply.body;
    EXPECT_FALSE(StringField(ParseJson(reply.body), "message").empty()) << c.what;
  }
  // Not HTTP at all.
  HttpReply garbage = HttpRaw(port, "HELLO WORLD\r\n\r\n");
  EXPECT_EQ(garbage.status, 400) << garbage.error << garbage.body;
  EXPECT_EQ(ErrorCodeOf(garbage), "bad_request");

  // Nothing was booked and the service still serves.
  EXPECT_EQ(QueryInt("SELECT count(*) FROM reservations"), 0);
  EXPECT_EQ(HttpCall(port, "GET", "/health").status, 200);
  EXPECT_EQ(Reserve(port, event, "alice", {1}).status, 201);
}

// A loopback connection with 3-second read and write timeouts; -1 on failure.
int ConnectWithTimeouts(int port) {
  std::string error;
  return ConnectLoopback(port, 3, &error);
}

bool SendAll(int fd, const std::string& data) {
  std::size_t sent = 0;
  while (sent < data.size()) {
    ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<std::size_t>(n);
  }
  return true;
}

// Reads until the end of a header block ("\r\n\r\n"), the peer's close or the timeout.
std::string ReadHead(int fd) {
  std::string got;
  char c;
  while (got.find("\r\n\r\n") == std::string::npos && ::recv(fd, &c, 1, 0) == 1) got += c;
  return got;
}

// curl sends "Expect: 100-continue" for bodies over 1 KiB and waits (a second) for the
// interim reply before sending the body.
TEST_P(ApiTest, AnswersExpect100ContinueBeforeTheBody) {
  int port = StartService();
  ASSERT_NE(port, 0);
  const std::string body = R"({"name":"expect","seats":3})";
  int fd = ConnectWithTimeouts(port);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(SendAll(fd, "POST /events HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
                          "Expect: 100-continue\r\nConnection: close\r\nContent-Length: " +
                              std::to_string(body.size()) + "\r\n\r\n"));
  EXPECT_EQ(ReadHead(fd), "HTTP/1.1 100 Continue\r\n\r\n") << "asked for the body";
  ASSERT_TRUE(SendAll(fd, body));
  const std::string final_head = ReadHead(fd);
  EXPECT_EQ(final_head.rfind("HTTP/1.1 201 ", 0), 0u) << final_head;
  ::close(fd);

  // A declared body over the limit is refused at once: no 100, the body is never sent.
  fd = ConnectWithTimeouts(port);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(SendAll(fd, "POST /events HTTP/1.1\r\nHost: test\r\nExpect: 100-continue\r\n"
                          "Content-Length: 10000000\r\n\r\n"));
  const std::string refused = ReadHead(fd);
  EXPECT_EQ(refused.rfind("HTTP/1.1 413 ", 0), 0u) << refused;
  ::close(fd);
  EXPECT_EQ(HttpCall(port, "GET", "/health").status, 200);
}

INSTANTIATE_TEST_SUITE_P(Backends, ApiTest,
                         ::testing::Values(LockBackend::kRedis, LockBackend::kLatchd), BackendName);

}  // namespace
}  // namespace latch::demo::test
