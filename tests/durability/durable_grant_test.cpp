// A lock handed to a parked waiter (LOCK.ACQUIRE ... WAIT) under appendfsync always (and
// everysec, which promises the same for kill -9): the waiter must not hear of its grant before
// the grant's journal record is on disk (written). The
// releasing thread is stopped right before it appends that record (TEST.FAULT STALL
// journal-append) and the server is killed there; the waiter must have been told nothing, and
// once it is told, a kill -9 must not take the lock from it.
//
// Threads: latchd runs with two io threads, to which the acceptor hands connections
// round-robin (docs/ARCHITECTURE.md, "Threads"). The connections are opened in the order
// observer, holder, waiter, so the observer shares the waiter's thread and not the holder's,
// which is the one that stops: the observer can still be answered, and its answers come after
// whatever the waiter's thread had to send before them.
#include <gtest/gtest.h>

#include <string>

#include "durability/latchd_child.h"
#include "durability/stall_kill.h"
#include "support/raw_connection.h"

namespace latch::test {
namespace {

// Whether a RESP2 LOCK.INFO reply shows the lock held by `owner` with fencing token `token`
// (its digits).
bool HeldBy(const std::string& info, const std::string& owner, const std::string& token) {
  return info.find("$5\r\nowner\r\n$" + std::to_string(owner.size()) + "\r\n" + owner +
                   "\r\n$5\r\ntoken\r\n:" + token + "\r\n") != std::string::npos;
}

// The three clients of a hand-off, the holder's lock held and the waiter parked behind it.
struct HandOff {
  explicit HandOff(int port) : observer(port), holder(port), waiter(port) {
    EXPECT_EQ(holder.Command("LOCK.ACQUIRE", "k", "holder", "60000").substr(0, 1), ":");
    EXPECT_TRUE(
        waiter.Send(RawConnection::Encode({"LOCK.ACQUIRE", "k", "waiter", "60000", "WAIT", "0"})));
    EXPECT_TRUE(WaitForReply(observer, {"LOCK.INFO", "k"}, "$7\r\nwaiters\r\n:1\r\n"));
    // The observer's later writes go to database 1: no shard the stopped holder's thread
    // holds. Created now, not while that thread is stopped.
    EXPECT_EQ(observer.Command("SELECT", "1"), "+OK\r\n");
    EXPECT_EQ(observer.Command("SET", "barrier", "0"), "+OK\r\n");
  }

  // Stops the holder's thread right before the grant's record is appended (the release's own
  // DEL record is not a key's new value: it goes through).
  void ReleaseAndStall() {
    EXPECT_EQ(observer.Command("TEST.FAULT", "STALL", "journal-append", "30000", "KEY", "k",
                               "COUNT", "1"),
              ":1\r\n");
    EXPECT_TRUE(holder.Send(RawConnection::Encode({"LOCK.RELEASE", "k", "holder"})));
    ASSERT_TRUE(WaitStalled(observer));
  }

  RawConnection observer, holder, waiter;
};

// The fsync policy.
class DurableGrantTest : public ::testing::TestWithParam<const char*> {};

TEST_P(DurableGrantTest, WaiterIsToldNothingBeforeItsGrantIsJournaled) {
  LatchdChild s(JournalWithTestCommands(GetParam()));
  ASSERT_TRUE(s.Start()) << s.Log();
  std::string told;
  {
    HandOff h(s.port());
    ASSERT_NO_FATAL_FAILURE(h.ReleaseAndStall());
    // A write on the waiter's thread, answered once its record is on disk: by then the DEL
    // before the grant is on disk too, and a grant reply that did not wait for its own
    // record has been sent (it was queued on that thread before this write arrived; under
    // everysec that thread writes the DEL out itself before it sends).
    EXPECT_EQ(h.observer.Command("SET", "barrier", "1"), "+OK\r\n");
    s.Kill9();  // the holder's thread still stands between the grant and its record
    told = Collect(h.waiter);
  }
  ASSERT_TRUE(s.Start()) << s.Log();
  RawConnection c(s.port());
  const std::string info = c.Command("LOCK.INFO", "k");
  if (!told.empty()) {
    EXPECT_TRUE(HeldBy(info, "waiter", told.substr(1, told.find('\r') - 1)))
        << "the waiter was granted " << told << "but after kill -9 and a restart LOCK.INFO is "
        << info;
  }
  EXPECT_EQ(told, "") << "a grant reply left before its journal record was appended";
  EXPECT_EQ(info, "$-1\r\n") << "the release is on disk, the grant nobody heard of is not";
}

TEST_P(DurableGrantTest, GrantSurvivesKill9TheMomentTheWaiterHearsOfIt) {
  LatchdChild s(JournalWithTestCommands(GetParam()));
  ASSERT_TRUE(s.Start()) << s.Log();
  std::string token;
  {
    HandOff h(s.port());
    ASSERT_NO_FATAL_FAILURE(h.ReleaseAndStall());
    EXPECT_EQ(h.observer.Command("TEST.FAULT", "RESUME"), "+OK\r\n");
    const std::optional<std::string> granted = h.waiter.ReadReply();
    ASSERT_TRUE(granted && (*granted)[0] == ':') << (granted ? *granted : h.waiter.error());
    s.Kill9();  // the very moment the waiter heard of its grant
    token = granted->substr(1, granted->size() - 3);
  }
  ASSERT_TRUE(s.Start()) << s.Log();
  RawConnection c(s.port());
  const std::string info = c.Command("LOCK.INFO", "k");
  EXPECT_TRUE(HeldBy(info, "waiter", token)) << "granted " << token << ", after restart " << info;
  EXPECT_EQ(c.Command("LOCK.ACQUIRE", "k", "thief", "1000"), "$-1\r\n");
}

INSTANTIATE_TEST_SUITE_P(Fsync, DurableGrantTest, ::testing::Values("always", "everysec"),
                         [](const auto& info) { return std::string(info.param); });

}  // namespace
}  // namespace latch::test
