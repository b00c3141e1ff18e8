// A parked LOCK.ACQUIRE ... WAIT ends at its deadline, and the deadline decides when it
// races a grant (issue 9 defect 3): after a stall (a SIGSTOPped latchd, or a manual clock
// moved past both the lease and the deadline at once) the waiter is answered nil and the
// key is not granted to it. WAIT deadlines run on the injected Clock, so a ManualClock
// times a waiter out.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <string>
#include <thread>

#include "support/embedded_server.h"
#include "support/raw_connection.h"
#include "support/server_process.h"
#include "support/wire_expect.h"

namespace latch::test {
namespace {

using std::chrono::milliseconds;

int DeadlineWaitersOf(RawConnection& c, const std::string& key) {
  const std::string r = c.Command("LOCK.INFO", key);
  const auto pos = r.rfind("waiters\r\n:");
  return pos == std::string::npos ? -1 : std::stoi(r.substr(pos + 10));
}

void DeadlinePark(RawConnection& waiter, RawConnection& observer, const std::string& ttl,
                  const std::string& timeout) {
  ASSERT_TRUE(waiter.Send(RawConnection::Encode({"LOCK.ACQUIRE", "k", "b", ttl, "WAIT", timeout})));
  ASSERT_TRUE(Eventually([&] { return DeadlineWaitersOf(observer, "k") == 1; })) << "never queued";
}

TEST(LockDeadline, ManualClockTimesAWaiterOut) {
  EmbeddedServer server;
  RawConnection holder(server.port());
  RawConnection waiter(server.port(), milliseconds(3000));
  ASSERT_EQ(holder.Command("SET", "k", "a", "PX", "100000"), "+OK\r\n");
  DeadlinePark(waiter, holder, "1000", "60000");
  server.clock().advance(60'001);  // the lease (100 s) still runs; the wait (60 s) is over
  const auto reply = waiter.ReadReply();
  ASSERT_TRUE(reply.has_value()) << "the waiter was not timed out on the manual clock";
  EXPECT_EQ(*reply, "$-1\r\n");
  EXPECT_EQ(DeadlineWaitersOf(holder, "k"), 0);
  EXPECT_EQ(holder.Command("GET", "k"), Bulk("a"));
}

// A clock jump past the lease and the deadline at once: the expiry that frees the key
// finds a waiter whose deadline has passed, which is answered nil, not granted.
TEST(LockDeadline, DeadlineBeatsAGrantAfterAClockJump) {
  EmbeddedServer server;
  RawConnection holder(server.port());
  RawConnection waiter(server.port(), milliseconds(3000));
  ASSERT_EQ(holder.Command("SET", "k", "a", "PX", "500"), "+OK\r\n");
  DeadlinePark(waiter, holder, "5000", "100");
  server.clock().advance(1000);
  const auto reply = waiter.ReadReply();
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(*reply, "$-1\r\n");
  EXPECT_EQ(holder.Command("GET", "k"), "$-1\r\n") << "the key went to a waiter past its deadline";
}

// The repro on a real process: hold k for 500 ms, park a waiter with WAIT 100,
// SIGSTOP latchd for a second, SIGCONT. Three tries; the old code granted in 2 of 3.
TEST(LockDeadline, WaiterPastItsDeadlineAfterSigstopIsAnsweredNil) {
  LatchdProcess latchd({"--io-threads", "2"});
  ASSERT_TRUE(latchd.ok()) << latchd.error();
  for (int attempt = 0; attempt < 3; ++attempt) {
    SCOPED_TRACE("attempt " + std::to_string(attempt));
    RawConnection holder(latchd.port());
    RawConnection waiter(latchd.port(), milliseconds(5000));
    holder.Command("DEL", "k");
    ASSERT_EQ(holder.Command("SET", "k", "a", "PX", "500"), "+OK\r\n");
    DeadlinePark(waiter, holder, "30000", "100");
    ASSERT_EQ(::kill(latchd.pid(), SIGSTOP), 0);
    std::this_thread::sleep_for(milliseconds(1000));
    ASSERT_EQ(::kill(latchd.pid(), SIGCONT), 0);
    const auto reply = waiter.ReadReply();
    ASSERT_TRUE(reply.has_value()) << "no reply after SIGCONT";
    EXPECT_EQ(*reply, "$-1\r\n") << "granted after its deadline";
    EXPECT_EQ(holder.Command("GET", "k"), "$-1\r\n") << "the key is held by a gone waiter";
  }
}

}  // namespace
}  // namespace latch::test
