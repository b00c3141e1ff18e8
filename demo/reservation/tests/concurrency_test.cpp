// Many users at once, over real HTTP: one seat, one winner; many seats, all served.
#include <atomic>
#include <latch>
#include <map>
#include <mutex>
#include <thread>

#include "demo_fixture.h"

namespace latch::demo::test {
namespace {

struct Tally {
  std::mutex mu;
  std::map<int, int> by_status;
  std::map<std::string, int> by_error;
  std::vector<std::int64_t> winners;  // reservation ids of the 201s
  std::vector<std::string> odd;       // unexpected replies, for the failure message

  void Add(const HttpReply& r) {
    std::lock_guard lock(mu);
    ++by_status[r.status];
    if (r.status == 201) {
      winners.push_back(IntField(ParseJson(r.body), "id"));
    } else {
      ++by_error[ErrorCodeOf(r)];
      if (r.status != 409) odd.push_back(std::to_string(r.status) + " " + r.error + r.body);
    }
  }
};

class ConcurrencyTest : public DemoTest {
 protected:
  // `users` threads start together and each reserves seat 1 once, on ports[i % ports.size()].
  void Stampede(const std::vector<int>& ports, std::int64_t event, int users, Tally* tally) {
    std::latch start(users);
    std::vector<std::thread> threads;
    for (int i = 0; i < users; ++i) {
      threads.emplace_back([&, i] {
        start.arrive_and_wait();
        tally->Add(Reserve(ports[i % ports.size()], event, "user" + std::to_string(i), {1}));
      });
    }
    for (auto& t : threads) t.join();
  }

  void ExpectOneWinner(Tally& tally, int users) {
    EXPECT_EQ(tally.by_status[201], 1);
    EXPECT_EQ(tally.by_status[409], users - 1);
    EXPECT_TRUE(tally.odd.empty()) << tally.odd.front();
    // Every loser was told why: the lock was busy, or the seat was already taken.
    EXPECT_EQ(tally.by_error["lock_busy"] + tally.by_error["seat_taken"], users - 1);
    ASSERT_EQ(tally.winners.size(), 1u);
    EXPECT_EQ(QueryInt("SELECT count(*) FROM reservations"), 1);
    EXPECT_EQ(QueryInt("SELECT count(*) FROM seats WHERE status = 'reserved'"), 1);
    EXPECT_EQ(QueryInt("SELECT reservation_id FROM seats WHERE seat_no = 1"), tally.winners[0]);
  }
};

TEST_P(ConcurrencyTest, FiftyUsersOneSeatExactlyOneWins) {
  int port = StartService();
  ASSERT_NE(port, 0);
  std::int64_t event = CreateEvent(port, 10);
  ASSERT_GT(event, 0);
  Tally tally;
  Stampede({port}, event, 50, &tally);
  ExpectOneWinner(tally, 50);
}

TEST_P(ConcurrencyTest, ThreeInstancesHundredUsersOneSeatExactlyOneWins) {
  std::vector<int> ports;
  for (int i = 0; i < 3; ++i) {
    ports.push_back(StartService());
    ASSERT_NE(ports.back(), 0);
  }
  std::int64_t event = CreateEvent(ports[0], 10);
  ASSERT_GT(event, 0);
  Tally tally;
  Stampede(ports, event, 100, &tally);
  ExpectOneWinner(tally, 100);
}

TEST_P(ConcurrencyTest, ThousandUsersDifferentSeatsAllSucceed) {
  constexpr int kSeats = 1000;
  constexpr int kInFlight = 50;
  int port = StartService();
  ASSERT_NE(port, 0);
  std::int64_t event = CreateEvent(port, kSeats);
  ASSERT_GT(event, 0);
  std::atomic<int> next{1};
  Tally tally;
  std::vector<std::thread> threads;
  for (int t = 0; t < kInFlight; ++t) {
    threads.emplace_back([&] {
      for (int seat = next++; seat <= kSeats; seat = next++) {
        tally.Add(Reserve(port, event, "user" + std::to_string(seat), {seat}));
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(tally.by_status[201], kSeats);
  EXPECT_TRUE(tally.odd.empty() && tally.by_error.empty())
      << (tally.odd.empty() ? tally.by_error.begin()->first : tally.odd.front());
  EXPECT_EQ(QueryInt("SELECT count(*) FROM seats WHERE status = 'reserved'"), kSeats);
  EXPECT_EQ(QueryInt("SELECT count(DISTINCT reservation_id) FROM seats"), kSeats);
  HttpReply info = HttpCall(port, "GET", "/events/" + std::to_string(event));
  EXPECT_EQ(IntField(ParseJson(info.body), "available"), 0);
}

INSTANTIATE_TEST_SUITE_P(Backends, ConcurrencyTest,
                         ::testing::Values(LockBackend::kRedis, LockBackend::kLatchd), BackendName);

}  // namespace
}  // namespace latch::demo::test
