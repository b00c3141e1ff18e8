// lock-restart-delay without a journal: no grant from the first byte a restarted latchd
// reads. The chaos test once saw a second grant 318 ms into a valid lease: the delay was armed
// after the (empty) journal step, while the listener already served, and a client that
// connected in that gap was granted a key the killed process had leased.
//
// Here racing clients connect in a tight loop while latchd starts, each sending its
// SET NX and LOCK.ACQUIRE the moment a connection opens (the kernel queues a connection as
// soon as the port listens, before any thread accepts it). Every reply must say "held".
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "durability/latchd_child.h"
#include "support/raw_connection.h"

namespace latch::test {
namespace {

using std::chrono::milliseconds;

// One racer: connects until it gets in (bounded by `deadline`), sends both acquires at once
// and returns their replies.
std::vector<std::string> RaceIn(int port, std::chrono::steady_clock::time_point deadline) {
  while (std::chrono::steady_clock::now() < deadline) {
    RawConnection c(milliseconds(5000));
    if (!c.Connect(port)) continue;  // not listening yet: try again at once
    const std::string both =
        RawConnection::Encode({"SET", "restart:k", "v", "NX", "PX", "60000"}) +
        RawConnection::Encode({"LOCK.ACQUIRE", "restart:l", "owner", "60000"});
    if (!c.Send(both)) return {"<send failed>"};
    std::vector<std::string> replies;
    for (int i = 0; i < 2; ++i) replies.push_back(c.ReadReply().value_or("<no reply>"));
    return replies;
  }
  return {"<never connected>"};
}

TEST(RestartDelayTest, NoGrantFromTheFirstConnectionOfAStart) {
  LatchdChild server({"--lock-restart-delay", "60000"});
  constexpr int kStarts = 20;
  constexpr int kRacers = 8;  // more runnable threads than cores: latchd's start gets preempted
  for (int round = 0; round < kStarts; ++round) {
    std::vector<std::vector<std::string>> seen(kRacers);
    std::atomic<bool> go{false};
    std::vector<std::thread> racers;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    for (int i = 0; i < kRacers; ++i) {
      racers.emplace_back([&, i] {
        while (!go) std::this_thread::yield();
        seen[static_cast<std::size_t>(i)] = RaceIn(server.port(), deadline);
      });
    }
    go = true;
    ASSERT_TRUE(server.Start()) << server.Log();
    for (auto& t : racers) t.join();
    for (const auto& r : seen) {
      ASSERT_EQ(r.size(), 2u) << r.front();
      EXPECT_EQ(r[0], "$-1\r\n") << "SET NX granted at start " << round;
      EXPECT_EQ(r[1], "$-1\r\n") << "LOCK.ACQUIRE granted at start " << round;
    }
    server.Kill9();
  }
}

}  // namespace
}  // namespace latch::test

namespace latch::test {
namespace {

// Every command that creates a key only where none is (a grant) is held back, whatever its
// spelling; plain writes, reads and the release of an existing key are not.
TEST(RestartDelayTest, EveryConditionalCreationIsHeldBack) {
  LatchdChild server({"--lock-restart-delay", "60000"});
  ASSERT_TRUE(server.Start()) << server.Log();
  RawConnection c(server.port());
  EXPECT_EQ(c.Command("SET", "a", "v", "NX", "PX", "1000"), "$-1\r\n");
  EXPECT_EQ(c.Command("SETNX", "a", "v"), ":0\r\n");
  EXPECT_EQ(c.Command("MSETNX", "a", "v", "b", "w"), ":0\r\n");
  EXPECT_EQ(c.Command("SET", "a", "v", "IFNE", "x", "PX", "1000"), "$-1\r\n");
  EXPECT_EQ(c.Command("LOCK.ACQUIRE", "a", "o", "1000"), "$-1\r\n");
  EXPECT_EQ(c.Command("EXISTS", "a", "b"), ":0\r\n") << "nothing was created";
  EXPECT_EQ(c.Command("MSET", "a", "1", "b", "2"), "+OK\r\n") << "only grants are held back";
  EXPECT_EQ(c.Command("SET", "a", "2", "IFNE", "x"), "+OK\r\n") << "an existing key may change";
  EXPECT_EQ(c.Command("MGET", "a", "b"), "*2\r\n$1\r\n2\r\n$1\r\n2\r\n");
}

}  // namespace
}  // namespace latch::test
