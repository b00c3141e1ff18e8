// The seat-map page in headless Chromium against a real service: two people in two browsers
// pick the same seat and press "Hold" together; exactly one gets it, the other is told why in
// words (someone is booking it right now / already taken), and the seat map shows it held.
#include <chrono>
#include <string>
#include <thread>

#include "chromium.h"
#include "demo_fixture.h"

namespace latch::demo::test {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

class PageTest : public DemoTest {};

std::string Text(HeadlessChromium& b, const std::string& id) {
  auto v = b.Evaluate("document.getElementById('" + id + "').textContent");
  return v.is_string() ? std::string(v.as_string()) : "";
}

TEST_P(PageTest, TwoBrowsersOneSeatExactlyOneWinsTheOtherSeesTheConflict) {
  int port = StartService();
  ASSERT_NE(port, 0);
  std::int64_t event = CreateEvent(port, 20);
  ASSERT_GT(event, 0);
  const std::string page = "http://127.0.0.1:" + std::to_string(port) +
                           "/?event=" + std::to_string(event) + "&user=";

  HeadlessChromium alice;
  HeadlessChromium bob;
  ASSERT_TRUE(alice.Open(page + "alice")) << alice.error();
  ASSERT_TRUE(bob.Open(page + "bob")) << bob.error();
  const std::string seat7 = "document.querySelector('#seats [data-seat=\"7\"]')";
  for (HeadlessChromium* b : {&alice, &bob}) {
    ASSERT_TRUE(b->WaitFor(seat7 + " !== null && " + seat7 + ".dataset.status === 'available'",
                           seconds(30)))
        << b->error();
    // A person's click on the seat: it is picked, and the hold button comes alive.
    b->Evaluate(seat7 + ".click()");
    ASSERT_TRUE(b->WaitFor(seat7 + ".dataset.status === 'selected' && "
                           "!document.getElementById('hold').disabled",
                           seconds(5)))
        << b->error();
  }
  // Both press "Hold" at once (neither waits for its answer before the other clicks).
  alice.Evaluate("document.getElementById('hold').click()");
  bob.Evaluate("document.getElementById('hold').click()");
  const std::string settled =
      "['held', 'lock_busy', 'seat_taken'].includes(document.getElementById('message')"
      ".dataset.code)";
  ASSERT_TRUE(alice.WaitFor(settled, seconds(15))) << alice.error();
  ASSERT_TRUE(bob.WaitFor(settled, seconds(15))) << bob.error();

  int winners = 0;
  for (HeadlessChromium* b : {&alice, &bob}) {
    auto code = b->Evaluate("document.getElementById('message').dataset.code");
    ASSERT_TRUE(code.is_string());
    const std::string message = Text(*b, "message");
    if (code.as_string() == "held") {
      ++winners;
      EXPECT_EQ(b->Evaluate("document.getElementById('reservation').hidden"), false);
      EXPECT_EQ(Text(*b, "reservation-seats"), "7");
      EXPECT_EQ(Text(*b, "reservation-status"), "held");
      // The 15-minute hold counts down: 14:5x or 15:00 right after the hold.
      const std::string left = Text(*b, "countdown");
      EXPECT_TRUE(left.rfind("14:", 0) == 0 || left == "15:00") << left;
      EXPECT_TRUE(b->WaitFor(seat7 + ".dataset.status === 'mine'", seconds(5))) << b->error();
    } else if (code.as_string() == "lock_busy") {
      EXPECT_NE(message.find("Someone is booking this seat right now"), std::string::npos)
          << message;
    } else {
      EXPECT_NE(message.find("Already taken"), std::string::npos) << message;
    }
    if (code.as_string() != "held") {
      EXPECT_EQ(b->Evaluate("document.getElementById('reservation').hidden"), true);
      // The loser's map shows the seat as someone else's once it refreshes.
      EXPECT_TRUE(b->WaitFor(seat7 + ".dataset.status === 'held'", seconds(10))) << b->error();
    }
  }
  EXPECT_EQ(winners, 1);
  EXPECT_EQ(QueryInt("SELECT count(*) FROM reservations"), 1);
  EXPECT_EQ(QueryInt("SELECT count(*) FROM seats WHERE status = 'reserved'"), 1);
}

// The lock server makes no difference to the page: one backend keeps the test short.
INSTANTIATE_TEST_SUITE_P(Backends, PageTest, ::testing::Values(LockBackend::kLatchd),
                         BackendName);

}  // namespace
}  // namespace latch::demo::test
