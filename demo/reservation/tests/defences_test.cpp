// Each defence on its own: idempotency keys over HTTP, the conditional UPDATE with the lock
// defence switched off, and the fencing token check against a stale lock holder.
#include <latch>
#include <mutex>
#include <set>
#include <thread>

#include "adapters/pg_store.h"
#include "app/reservation_service.h"
#include "demo_fixture.h"
#include "domain/rules.h"
#include "latch/lock.h"

namespace latch::demo::test {
namespace {

using std::chrono::milliseconds;

class DefenceTest : public DemoTest {};

// Locks that were "taken" elsewhere: hands the use case the given fencing tokens, the way a
// request holding an old lease (a paused process, an expired TTL) would carry them.
class ReplayedLocks : public SeatLocks {
 public:
  explicit ReplayedLocks(std::vector<std::optional<std::int64_t>> tokens)
      : tokens_(std::move(tokens)) {}
  Outcome<std::unique_ptr<HeldLocks>> AcquireAll(const std::vector<std::string>&) override {
    return std::unique_ptr<HeldLocks>(std::make_unique<Held>(tokens_));
  }
  Outcome<Unit> Ping() override { return Unit{}; }

 private:
  struct Held : HeldLocks {
    explicit Held(std::vector<std::optional<std::int64_t>> t) : tokens(std::move(t)) {}
    const std::vector<std::optional<std::int64_t>>& fencing_tokens() const override {
      return tokens;
    }
    std::vector<std::optional<std::int64_t>> tokens;
  };
  std::vector<std::optional<std::int64_t>> tokens_;
};

TEST_P(DefenceTest, IdempotencyKeyReplaysTheFirstResponse) {
  int first_port = StartService();
  int second_port = StartService();
  ASSERT_NE(first_port, 0);
  ASSERT_NE(second_port, 0);
  std::int64_t event = CreateEvent(first_port, 5);
  ASSERT_GT(event, 0);
  const Headers key1 = {{"Idempotency-Key", "key-1"}};

  HttpReply first = Reserve(first_port, event, "alice", {1}, key1);
  ASSERT_EQ(first.status, 201) << first.body;
  EXPECT_EQ(first.header("idempotent-replayed"), "");
  HttpReply retry = Reserve(second_port, event, "alice", {1}, key1);  // another instance
  EXPECT_EQ(retry.status, 201);
  EXPECT_EQ(retry.body, first.body);
  EXPECT_EQ(retry.header("idempotent-replayed"), "true");
  EXPECT_EQ(QueryInt("SELECT count(*) FROM reservations"), 1);

  // Twenty retries of one request at the same moment, on two instances: one booking, and
  // every one of them gets its response.
  constexpr int kRetries = 20;
  std::latch start(kRetries);
  std::mutex mu;
  std::vector<HttpReply> replies;
  std::vector<std::thread> threads;
  for (int i = 0; i < kRetries; ++i) {
    threads.emplace_back([&, i] {
      start.arrive_and_wait();
      HttpReply r = Reserve(i % 2 ? first_port : second_port, event, "bob", {2},
                            {{"Idempotency-Key", "key-2"}});
      std::lock_guard lock(mu);
      replies.push_back(std::move(r));
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_EQ(replies.size(), static_cast<std::size_t>(kRetries));
  int fresh = 0;
  for (const HttpReply& r : replies) {
    EXPECT_EQ(r.status, 201) << r.error << r.body;
    EXPECT_EQ(r.body, replies[0].body);
    fresh += r.header("idempotent-replayed").empty();
  }
  EXPECT_EQ(fresh, 1);
  EXPECT_EQ(QueryInt("SELECT count(*) FROM reservations WHERE seats = '{2}'"), 1);

  // The same key with a different request: refused, nothing booked.
  HttpReply mismatch = Reserve(first_port, event, "alice", {3}, key1);
  EXPECT_EQ(mismatch.status, 422) << mismatch.body;
  EXPECT_EQ(ErrorCodeOf(mismatch), "idempotency_mismatch");
  EXPECT_EQ(QueryInt("SELECT count(*) FROM seats WHERE seat_no = 3 AND status = 'available'"), 1);

  // A definitive refusal is the first result too: replayed even after the seat came free.
  HttpReply taken = Reserve(first_port, event, "carol", {1}, {{"Idempotency-Key", "key-3"}});
  ASSERT_EQ(taken.status, 409) << taken.body;
  EXPECT_EQ(ErrorCodeOf(taken), "seat_taken");
  const std::string alice = std::to_string(IntField(ParseJson(first.body), "id"));
  ASSERT_EQ(HttpCall(first_port, "POST", "/reservations/" + alice + "/cancel").status, 200);
  HttpReply taken_again = Reserve(second_port, event, "carol", {1}, {{"Idempotency-Key", "key-3"}});
  EXPECT_EQ(taken_again.status, 409);
  EXPECT_EQ(taken_again.body, taken.body);
  EXPECT_EQ(QueryInt("SELECT count(*) FROM seats WHERE seat_no = 1 AND status = 'available'"), 1);

  // A transient refusal (the seat's lock is held elsewhere) is not stored: the retry books.
  auto client_options = ClientOptions::FromUrl(lock_url()).value();
  Client client(client_options);
  Lock lock(client);
  auto held = lock.acquire_sync(SeatLockKey(event, 4), milliseconds(10000));
  ASSERT_TRUE(held.ok()) << held.error().ToString();
  HttpReply busy = Reserve(first_port, event, "dave", {4}, {{"Idempotency-Key", "key-4"}});
  EXPECT_EQ(busy.status, 409) << busy.body;
  EXPECT_EQ(ErrorCodeOf(busy), "lock_busy");
  ASSERT_TRUE(lock.release_sync(*held).ok());
  HttpReply booked = Reserve(first_port, event, "dave", {4}, {{"Idempotency-Key", "key-4"}});
  EXPECT_EQ(booked.status, 201) << booked.body;
  EXPECT_EQ(booked.header("idempotent-replayed"), "");
}

// Defence 2 alone: no seat locks at all, twenty concurrent use-case calls on one seat.
TEST_P(DefenceTest, ConditionalUpdateAloneStopsADoubleBooking) {
  PgPool pool(conninfo(), 24, milliseconds(10000));
  ASSERT_TRUE(ApplySchema(pool).ok());
  PgStore store(pool);
  ReservationService unlocked(store, /*seat_locks=*/nullptr, std::chrono::minutes(15));
  auto event = unlocked.CreateEvent("unlocked", 3);
  ASSERT_TRUE(event.ok()) << event.error().message;

  constexpr int kUsers = 20;
  std::latch start(kUsers);
  std::mutex mu;
  std::multiset<ErrorCode> refused;
  int booked = 0;
  std::vector<std::thread> threads;
  for (int i = 0; i < kUsers; ++i) {
    threads.emplace_back([&, i] {
      start.arrive_and_wait();
      auto r = unlocked.Reserve({event->id, "user" + std::to_string(i), {1}});
      std::lock_guard lock(mu);
      if (r.ok()) {
        ++booked;
      } else {
        refused.insert(r.error().code);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(booked, 1);
  EXPECT_EQ(refused.count(ErrorCode::kSeatTaken), static_cast<std::size_t>(kUsers - 1));
  EXPECT_EQ(QueryInt("SELECT count(*) FROM reservations"), 1);  // losers left no row behind
  EXPECT_EQ(QueryInt("SELECT count(*) FROM seats WHERE status = 'reserved'"), 1);
}

// Defence 2's fencing check: a lock holder that stalled past its lease writes with an old
// token after a newer holder has written; the seat is available again, so only the fence
// can refuse it. Redis hands out no tokens: there the write carries none and is not fenced.
TEST_P(DefenceTest, StaleFencingTokenIsRejected) {
  int port = StartService();
  ASSERT_NE(port, 0);
  std::int64_t event = CreateEvent(port, 3);
  ASSERT_GT(event, 0);
  auto client_options = ClientOptions::FromUrl(lock_url()).value();
  Client client(client_options);
  Lock lock(client);
  const std::string key = SeatLockKey(event, 1);

  auto stalled = lock.acquire_sync(key, milliseconds(5000));  // then it pauses...
  ASSERT_TRUE(stalled.ok()) << stalled.error().ToString();
  ASSERT_TRUE(lock.release_sync(*stalled).ok());  // ...and its lease is gone
  HttpReply newer = Reserve(port, event, "bob", {1});
  ASSERT_EQ(newer.status, 201) << newer.body;
  const std::string id = std::to_string(IntField(ParseJson(newer.body), "id"));
  ASSERT_EQ(HttpCall(port, "POST", "/reservations/" + id + "/cancel").status, 200);
  const std::int64_t fence = QueryInt("SELECT fence FROM seats WHERE seat_no = 1");

  PgPool pool(conninfo(), 2, milliseconds(10000));
  PgStore store(pool);
  ReplayedLocks stale_locks({stalled->fencing_token});
  ReservationService stale(store, &stale_locks, std::chrono::minutes(15));
  auto late = stale.Reserve({event, "mallory", {1}});
  if (!latchd()) {
    EXPECT_FALSE(stalled->fencing_token.has_value());
    EXPECT_EQ(fence, 0);
    EXPECT_TRUE(late.ok());  // nothing to fence with: the status check is all there is
    return;
  }
  ASSERT_TRUE(stalled->fencing_token.has_value());
  EXPECT_GT(fence, *stalled->fencing_token);
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.error().code, ErrorCode::kStaleFence) << late.error().message;
  EXPECT_EQ(QueryInt("SELECT count(*) FROM seats WHERE seat_no = 1 AND status = 'available'"), 1);
  EXPECT_EQ(QueryInt("SELECT fence FROM seats WHERE seat_no = 1"), fence);
  EXPECT_EQ(QueryInt("SELECT count(*) FROM reservations WHERE user_id = 'mallory'"), 0);

  // A lease granted after that write carries a newer token and may write.
  auto current = lock.acquire_sync(key, milliseconds(5000));
  ASSERT_TRUE(current.ok()) << current.error().ToString();
  ReplayedLocks current_locks({current->fencing_token});
  ReservationService fresh(store, &current_locks, std::chrono::minutes(15));
  auto booked = fresh.Reserve({event, "carol", {1}});
  EXPECT_TRUE(booked.ok()) << booked.error().message;
  EXPECT_EQ(QueryInt("SELECT fence FROM seats WHERE seat_no = 1"), *current->fencing_token);
  lock.release_sync(*current);
}

INSTANTIATE_TEST_SUITE_P(Backends, DefenceTest,
                         ::testing::Values(LockBackend::kRedis, LockBackend::kLatchd), BackendName);

}  // namespace
}  // namespace latch::demo::test
