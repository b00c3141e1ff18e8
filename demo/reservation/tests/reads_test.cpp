// The cheap reads and what a person sees: availability kept in step with every change of the
// seats, seat pages by seat number, the seat map, the page's files, and one access log line
// per request with its round trips.
#include <chrono>
#include <cstdio>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "demo_fixture.h"

namespace latch::demo::test {
namespace {

using std::chrono::milliseconds;
using SteadyClock = std::chrono::steady_clock;

class ReadsTest : public DemoTest {
 protected:
  std::int64_t Available(int port, std::int64_t event) {
    return IntField(ParseJson(HttpCall(port, "GET", "/events/" + std::to_string(event)).body),
                    "available");
  }
  // The event's available seats counted in the table itself: what the kept count must equal.
  std::int64_t Counted(std::int64_t event) {
    return QueryInt("SELECT count(*) FROM seats WHERE status = 'available' AND event_id = " +
                    std::to_string(event));
  }
  std::string SeatMapOf(int port, std::int64_t event, const std::string& query = "") {
    HttpReply r = HttpCall(port, "GET", "/events/" + std::to_string(event) + "/seatmap" + query);
    EXPECT_EQ(r.status, 200) << r.body;
    return StringField(ParseJson(r.body), "seats");
  }
};

std::vector<std::int64_t> SeatsOf(const HttpReply& reply) {
  std::vector<std::int64_t> out;
  auto v = ParseJson(reply.body);
  if (!v.is_object() || !v.as_object().contains("seats")) return out;
  for (const auto& s : v.at("seats").as_array()) out.push_back(s.as_int64());
  return out;
}

// The count is not counted at read time: it is changed with the seats by reserve, a refused
// reserve (nothing), confirm (nothing), cancel, and hold expiry on read and by the sweeper.
TEST_P(ReadsTest, AvailabilityStaysExactThroughEveryChange) {
  ServiceOptions options = Options();
  options.hold = milliseconds(400);
  int port = StartService(options);
  ASSERT_NE(port, 0);
  std::int64_t event = CreateEvent(port, 40);
  ASSERT_GT(event, 0);
  std::int64_t other = CreateEvent(port, 7);  // changes here must not leak into `event`
  ASSERT_GT(other, 0);
  EXPECT_EQ(Available(port, event), 40);

  HttpReply a = Reserve(port, event, "alice", {1, 2, 3});
  ASSERT_EQ(a.status, 201) << a.body;
  EXPECT_EQ(Reserve(port, event, "bob", {3, 4}).status, 409);  // refused: no change
  HttpReply b = Reserve(port, event, "bob", {5, 6});
  ASSERT_EQ(b.status, 201) << b.body;
  ASSERT_EQ(Reserve(port, other, "carol", {1}).status, 201);
  EXPECT_EQ(Available(port, event), 35);
  EXPECT_EQ(Available(port, event), Counted(event));

  const std::string a_id = std::to_string(IntField(ParseJson(a.body), "id"));
  const std::string b_id = std::to_string(IntField(ParseJson(b.body), "id"));
  ASSERT_EQ(HttpCall(port, "POST", "/reservations/" + a_id + "/confirm").status, 200);
  EXPECT_EQ(Available(port, event), 35);
  ASSERT_EQ(HttpCall(port, "POST", "/reservations/" + a_id + "/cancel").status, 200);
  EXPECT_EQ(Available(port, event), 38);
  EXPECT_EQ(Available(port, event), Counted(event));

  // b's hold runs out: the first read after that frees its seats and counts them at once.
  std::this_thread::sleep_for(milliseconds(600));
  EXPECT_EQ(Available(port, event), 40);
  EXPECT_EQ(Available(port, event), Counted(event));
  EXPECT_EQ(StringField(ParseJson(HttpCall(port, "GET", "/reservations/" + b_id).body), "status"),
            "expired");
  // And by the sweeper, which nobody's read triggers.
  ASSERT_EQ(Reserve(port, event, "dave", {7, 8, 9}).status, 201);
  options.sweep_interval = milliseconds(50);
  ASSERT_NE(StartService(options), 0);
  const auto deadline = SteadyClock::now() + std::chrono::seconds(10);
  while (SteadyClock::now() < deadline && Counted(event) != 40) {
    std::this_thread::sleep_for(milliseconds(25));
  }
  EXPECT_EQ(Counted(event), 40);
  EXPECT_EQ(QueryInt("SELECT sum(available) FROM event_counts WHERE event_id = " +
                     std::to_string(event)),
            40);
  // carol's hold on the other event ran out too.
  EXPECT_EQ(Available(port, other), 7);
  EXPECT_EQ(Counted(other), 7);
}

TEST_P(ReadsTest, SeatPagesBySeatNumberAndTheSeatMap) {
  int port = StartService();
  ASSERT_NE(port, 0);
  std::int64_t event = CreateEvent(port, 12);
  ASSERT_GT(event, 0);
  HttpReply held = Reserve(port, event, "alice", {4, 5});
  ASSERT_EQ(held.status, 201) << held.body;
  HttpReply sold = Reserve(port, event, "bob", {9});
  ASSERT_EQ(sold.status, 201) << sold.body;
  const std::string sold_id = std::to_string(IntField(ParseJson(sold.body), "id"));
  ASSERT_EQ(HttpCall(port, "POST", "/reservations/" + sold_id + "/confirm").status, 200);

  const std::string seats = "/events/" + std::to_string(event) + "/seats";
  EXPECT_EQ(SeatsOf(HttpCall(port, "GET", seats + "?limit=4")),
            (std::vector<std::int64_t>{1, 2, 3, 6}));
  // The next page starts after the last seat of this one.
  EXPECT_EQ(SeatsOf(HttpCall(port, "GET", seats + "?after=6&limit=4")),
            (std::vector<std::int64_t>{7, 8, 10, 11}));
  EXPECT_EQ(SeatsOf(HttpCall(port, "GET", seats + "?after=11")), (std::vector<std::int64_t>{12}));
  EXPECT_TRUE(SeatsOf(HttpCall(port, "GET", seats + "?after=12")).empty());
  EXPECT_EQ(SeatsOf(HttpCall(port, "GET", seats + "?after=2&offset=1&limit=2")),
            (std::vector<std::int64_t>{6, 7}));
  EXPECT_EQ(HttpCall(port, "GET", seats + "?after=x").status, 400);

  EXPECT_EQ(SeatMapOf(port, event), "aaahhaaacaaa");
  EXPECT_EQ(SeatMapOf(port, event, "?from=4&count=6"), "hhaaac");
  HttpReply map = HttpCall(port, "GET", "/events/" + std::to_string(event) + "/seatmap?from=9");
  EXPECT_EQ(IntField(ParseJson(map.body), "from"), 9);
  EXPECT_EQ(HttpCall(port, "GET", "/events/987654/seatmap").status, 404);
  EXPECT_EQ(HttpCall(port, "GET", "/events/" + std::to_string(event) + "/seatmap?count=0").status,
            400);
}

TEST_P(ReadsTest, ServesThePageWithoutABuildStep) {
  int port = StartService();
  ASSERT_NE(port, 0);
  HttpReply page = HttpCall(port, "GET", "/");
  ASSERT_EQ(page.status, 200);
  EXPECT_EQ(page.header("content-type"), "text/html; charset=utf-8");
  EXPECT_NE(page.body.find("<script src=\"/app.js\">"), std::string::npos);
  HttpReply js = HttpCall(port, "GET", "/app.js");
  EXPECT_EQ(js.status, 200);
  EXPECT_EQ(js.header("content-type"), "text/javascript; charset=utf-8");
  EXPECT_NE(js.body.find("seatmap"), std::string::npos);
  EXPECT_EQ(HttpCall(port, "GET", "/app.css").header("content-type"), "text/css; charset=utf-8");
  EXPECT_EQ(HttpCall(port, "POST", "/").status, 405);
}

// Reads the access log until it has `lines` lines (the server writes a line just after the
// response, so the client may see the response first); bounded.
std::vector<std::string> LogLines(std::FILE* log, std::size_t lines) {
  std::vector<std::string> out;
  const auto deadline = SteadyClock::now() + std::chrono::seconds(5);
  while (SteadyClock::now() < deadline) {
    out.clear();
    std::fflush(log);
    std::rewind(log);
    char buf[4096];
    while (std::fgets(buf, sizeof(buf), log) != nullptr) out.emplace_back(buf);
    if (out.size() >= lines) break;
    std::this_thread::sleep_for(milliseconds(20));
  }
  return out;
}

TEST_P(ReadsTest, OneAccessLogLinePerRequestWithItsRoundTrips) {
  std::FILE* log = std::tmpfile();
  ASSERT_NE(log, nullptr);
  ServiceOptions options = Options();
  options.access_log = log;
  int port = StartService(options);
  ASSERT_NE(port, 0);
  std::int64_t event = CreateEvent(port, 5);
  ASSERT_GT(event, 0);
  const std::string target = "/events/" + std::to_string(event);
  HttpCall(port, "GET", target);
  HttpCall(port, "GET", target);
  ASSERT_EQ(Reserve(port, event, "alice", {1}).status, 201);
  ASSERT_EQ(Reserve(port, event, "bob", {2}).status, 201);
  HttpCall(port, "GET", "/nope");
  HttpRaw(port, "NOT HTTP\r\n\r\n");
  std::vector<std::string> lines = LogLines(log, 7);
  std::fclose(log);
  ASSERT_EQ(lines.size(), 7u);

  const std::regex line(
      R"(^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (\S+) (\S+) (\d{3}) \d+\.\d\dms( pg=(\d+) lock=(\d+))?\n$)");
  std::vector<std::smatch> m(lines.size());
  for (std::size_t i = 0; i < lines.size(); ++i) {
    ASSERT_TRUE(std::regex_match(lines[i], m[i], line)) << lines[i];
  }
  EXPECT_EQ(m[0][1], "POST");
  EXPECT_EQ(m[0][2], "/events");
  EXPECT_EQ(m[0][3], "201");
  // A read is one round trip to PostgreSQL once its statement is prepared on the connection
  // (sequential requests reuse the same one), and none to the lock server.
  EXPECT_EQ(m[2][2], target);
  EXPECT_EQ(m[2][4], " pg=1 lock=0") << lines[2];
  // A booking: one round trip to PostgreSQL (BEGIN, expiry, the hold and COMMIT together),
  // two to the lock server (acquire, release).
  EXPECT_EQ(m[4][3], "201");
  EXPECT_EQ(m[4][4], " pg=1 lock=2") << lines[4];
  EXPECT_EQ(m[5][3], "404");
  EXPECT_EQ(m[6][1], "-");  // not HTTP: answered 400, logged all the same
  EXPECT_EQ(m[6][3], "400");
}

INSTANTIATE_TEST_SUITE_P(Backends, ReadsTest,
                         ::testing::Values(LockBackend::kRedis, LockBackend::kLatchd), BackendName);

}  // namespace
}  // namespace latch::demo::test
