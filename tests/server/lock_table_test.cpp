// LockTable on a real shard and a manual clock: grants, FIFO hand-off on every removal path
// (release, delete, lazy and active expiry, clear), abandoned waiters, fencing tokens and
// the memory the table keeps (none for a key nobody waits on once it is gone).
#include "store/lock_table.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "key_event_router.h"
#include "store/lock_ops.h"

namespace latch::store {
namespace {

class LockTableTest : public ::testing::Test {
 protected:
  LockTableTest() : keyspace_(1, clock_.MonoMs()), locks_(keyspace_, clock_) {}

  Shard& shard() { return keyspace_.shard(0); }
  LockTable& table() { return locks_.ForShard(keyspace_.ShardIndex(HashKey("k"))); }
  TimeSnapshot now() const { return clock_.Now(); }
  static std::uint64_t H(std::string_view k) { return HashKey(k); }

  KeyRef Ref(std::string_view key) { return KeyRef{key, H(key), &shard()}; }
  std::uint64_t Acquire(std::string_view key, std::string_view owner, std::int64_t ttl) {
    return OpAcquire(table(), Ref(key), owner, ttl, now());
  }
  // LOCK.RELEASE / LOCK.EXTEND's replies: 1 done, 0 another owner, -1 not held.
  static int Reply(OpStatus s) { return s == OpStatus::kOk ? 1 : s == OpStatus::kNotMet ? 0 : -1; }
  int Release(std::string_view key, std::uint64_t, std::string_view owner, TimeSnapshot t) {
    return Reply(OpRelease(table(), Ref(key), owner, t));
  }
  int Extend(std::string_view key, std::uint64_t, std::string_view owner, std::int64_t ttl,
             TimeSnapshot t) {
    return Reply(OpExtend(table(), Ref(key), owner, ttl, t));
  }
  Object* Set(Object* existing, std::string_view key, std::string_view value, bool keep_ttl) {
    return shard().Put(existing, key, H(key), value, keep_ttl ? Expiry::Keep() : Expiry::Clear());
  }
  void Erase(Object* o) { shard().Erase(o, H(o->key())); }
  Object* Get(std::string_view key) { return shard().Find(key, H(key), now().mono_ms); }
  std::string ValueOf(std::string_view key) {
    Object* o = Get(key);
    return o ? std::string(o->value()) : std::string("<none>");
  }

  // A waiter that records its grants; `willing` false plays a client that stopped waiting.
  struct Recorder {
    std::vector<std::uint64_t> tokens;
    bool willing = true;
  };
  std::uint64_t Park(std::string_view key, std::string owner, std::int64_t ttl,
                     std::shared_ptr<Recorder> r) {
    LockWaiter w;
    w.owner = std::move(owner);
    w.ttl_ms = ttl;
    w.claim = [r] { return r->willing; };
    w.grant = [r](std::uint64_t token) { r->tokens.push_back(token); };
    return table().Enqueue(key, H(key), std::move(w));
  }

  ManualClock clock_;
  Keyspace keyspace_;
  LockTables locks_;
  WatchRegistry watches_;
  KeyEventRouter router_{keyspace_, locks_, watches_};  // hands gone keys to the waiters
};

TEST_F(LockTableTest, GrantCreatesAnOrdinaryKeyWithTheOwnerAndTtl) {
  std::uint64_t t = Acquire("k", "alice", 1000);
  ASSERT_NE(t, 0u);
  Object* o = Get("k");
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(o->value(), "alice");
  EXPECT_EQ(o->expire_at(), now().mono_ms + 1000);
  EXPECT_EQ(Acquire("k", "bob", 1000), 0u);
  EXPECT_EQ(Acquire("k", "alice", 1000), 0u) << "a re-acquire by the owner is not a grant";
  EXPECT_EQ(locks_.stats().grants.load(), 1u);
  EXPECT_EQ(locks_.stats().contended.load(), 2u);
}

TEST_F(LockTableTest, TokensAreAtLeastWallClockNanoseconds) {
  std::uint64_t t = Acquire("k", "a", 1000);
  EXPECT_GE(t, static_cast<std::uint64_t>(now().wall_us) * 1000);
}

TEST_F(LockTableTest, ReleaseAndExtendTellLostFromNotYours) {
  ASSERT_NE(Acquire("k", "a", 1000), 0u);
  EXPECT_EQ(Release("k", H("k"), "b", now()), 0);
  EXPECT_EQ(Extend("k", H("k"), "b", 5000, now()), 0);
  EXPECT_EQ(locks_.stats().non_owner_releases.load(), 1u);
  EXPECT_EQ(Extend("k", H("k"), "a", 5000, now()), 1);
  EXPECT_EQ(Get("k")->expire_at(), now().mono_ms + 5000);
  EXPECT_EQ(Release("k", H("k"), "a", now()), 1);
  EXPECT_EQ(Get("k"), nullptr);
  EXPECT_EQ(Release("k", H("k"), "a", now()), -1);
  EXPECT_EQ(Extend("k", H("k"), "a", 5000, now()), -1);
  EXPECT_EQ(table().tracked(), 0u) << "nothing kept for a released key without waiters";
}

TEST_F(LockTableTest, ReleaseHandsOffInFifoOrderWithTheWaitersTtl) {
  ASSERT_NE(Acquire("k", "a", 1000), 0u);
  auto b = std::make_shared<Recorder>(), c = std::make_shared<Recorder>(),
       d = std::make_shared<Recorder>();
  Park("k", "b", 2000, b);
  Park("k", "c", 3000, c);
  Park("k", "d", 4000, d);
  EXPECT_EQ(locks_.stats().waiters.load(), 3);

  ASSERT_EQ(Release("k", H("k"), "a", now()), 1);
  ASSERT_EQ(b->tokens.size(), 1u);
  EXPECT_TRUE(c->tokens.empty());
  EXPECT_EQ(ValueOf("k"), "b");
  EXPECT_EQ(Get("k")->expire_at(), now().mono_ms + 2000);

  ASSERT_EQ(Release("k", H("k"), "b", now()), 1);
  ASSERT_EQ(c->tokens.size(), 1u);
  EXPECT_GT(c->tokens[0], b->tokens[0]);
  EXPECT_EQ(ValueOf("k"), "c");

  ASSERT_EQ(Release("k", H("k"), "c", now()), 1);
  ASSERT_EQ(d->tokens.size(), 1u);
  EXPECT_EQ(ValueOf("k"), "d");
  std::optional<LockInfo> info = table().Info("k", H("k"), now());
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->token, d->tokens[0]);
  EXPECT_EQ(info->waiters, 0u);

  EXPECT_EQ(locks_.stats().handoffs.load(), 3u);
  EXPECT_EQ(locks_.stats().waiters.load(), 0);
}

TEST_F(LockTableTest, WaitersThatStoppedWaitingAreSkipped) {
  ASSERT_NE(Acquire("k", "a", 1000), 0u);
  auto gone = std::make_shared<Recorder>(), next = std::make_shared<Recorder>();
  gone->willing = false;
  Park("k", "gone", 1000, gone);
  Park("k", "next", 1000, next);
  ASSERT_EQ(Release("k", H("k"), "a", now()), 1);
  EXPECT_TRUE(gone->tokens.empty());
  ASSERT_EQ(next->tokens.size(), 1u);
  EXPECT_EQ(ValueOf("k"), "next");
}

TEST_F(LockTableTest, RemovedWaiterLeavesTheQueueAndTheTable) {
  ASSERT_NE(Acquire("k", "a", 1000), 0u);
  auto b = std::make_shared<Recorder>(), c = std::make_shared<Recorder>();
  std::uint64_t id_b = Park("k", "b", 1000, b);
  Park("k", "c", 1000, c);
  table().RemoveWaiter("k", H("k"), id_b);
  table().RemoveWaiter("k", H("k"), id_b);  // twice: a no-op
  EXPECT_EQ(table().Info("k", H("k"), now())->waiters, 1u);
  ASSERT_EQ(Release("k", H("k"), "a", now()), 1);
  EXPECT_TRUE(b->tokens.empty());
  EXPECT_EQ(c->tokens.size(), 1u);
  ASSERT_EQ(Release("k", H("k"), "c", now()), 1);
  EXPECT_EQ(table().tracked(), 0u);
}

TEST_F(LockTableTest, DeleteOfAnyKindHandsOff) {
  // A key taken with plain SET (no fencing state) still hands off when deleted.
  Set(nullptr, "k", "setnx-client", false);
  auto b = std::make_shared<Recorder>();
  Park("k", "b", 1000, b);
  Erase(Get("k"));
  ASSERT_EQ(b->tokens.size(), 1u);
  EXPECT_EQ(ValueOf("k"), "b");
}

TEST_F(LockTableTest, OverwritingTheKeyIsNotARelease) {
  ASSERT_NE(Acquire("k", "a", 1000), 0u);
  auto b = std::make_shared<Recorder>();
  Park("k", "b", 1000, b);
  Set(Get("k"), "k", "someone-else", false);
  EXPECT_TRUE(b->tokens.empty());
  EXPECT_EQ(table().Info("k", H("k"), now())->waiters, 1u);
}

TEST_F(LockTableTest, LazyExpiryHandsOffAndFindReturnsTheNewHolder) {
  ASSERT_NE(Acquire("k", "a", 1000), 0u);
  auto b = std::make_shared<Recorder>();
  Park("k", "b", 500, b);
  clock_.advance(1000);
  Object* o = Get("k");  // the expired key is found here, before any tick
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(o->value(), "b");
  EXPECT_EQ(o->expire_at(), now().mono_ms + 500);
  EXPECT_EQ(b->tokens.size(), 1u);
  EXPECT_EQ(locks_.stats().expired_while_held.load(), 1u);
  EXPECT_EQ(shard().size(), 1u);
}

TEST_F(LockTableTest, ActiveExpiryHandsOff) {
  ASSERT_NE(Acquire("k", "a", 1000), 0u);
  auto b = std::make_shared<Recorder>();
  Park("k", "b", 500, b);
  clock_.advance(1000);
  EXPECT_EQ(shard().ExpireDue(now().mono_ms, 100), 1u);
  ASSERT_EQ(b->tokens.size(), 1u);
  EXPECT_EQ(ValueOf("k"), "b");
  // The new holder's TTL is on the wheel: it expires in turn, and nothing is left behind.
  clock_.advance(500);
  EXPECT_EQ(shard().ExpireDue(now().mono_ms, 100), 1u);
  EXPECT_EQ(shard().size(), 0u);
  EXPECT_EQ(table().tracked(), 0u);
  EXPECT_EQ(locks_.stats().expired_while_held.load(), 2u);
}

TEST_F(LockTableTest, ClearHandsEveryQueueItsKey) {
  ASSERT_NE(Acquire("k", "a", 1000), 0u);
  ASSERT_NE(Acquire("j", "a", 1000), 0u);
  ASSERT_NE(Acquire("idle", "a", 1000), 0u);
  auto b = std::make_shared<Recorder>(), c = std::make_shared<Recorder>();
  Park("k", "b", 1000, b);
  Park("j", "c", 1000, c);
  shard().Clear();
  EXPECT_EQ(b->tokens.size(), 1u);
  EXPECT_EQ(c->tokens.size(), 1u);
  EXPECT_EQ(ValueOf("k"), "b");
  EXPECT_EQ(ValueOf("j"), "c");
  EXPECT_EQ(ValueOf("idle"), "<none>");
  EXPECT_EQ(table().tracked(), 0u) << "both queues are empty now";
  EXPECT_EQ(table().Info("k", H("k"), now())->token, b->tokens[0]);
  EXPECT_EQ(table().Info("j", H("j"), now())->token, c->tokens[0]);
}

TEST_F(LockTableTest, TokensIncreaseAcrossEveryWayAKeyGoes) {
  std::vector<std::uint64_t> tokens;
  tokens.push_back(Acquire("k", "a", 1000));
  ASSERT_EQ(Release("k", H("k"), "a", now()), 1);
  tokens.push_back(Acquire("k", "a", 1000));
  clock_.advance(1000);  // expired
  tokens.push_back(Acquire("k", "a", 1000));
  Erase(Get("k"));
  tokens.push_back(Acquire("k", "a", 1000));
  shard().Clear();
  clock_.step_wall(-3'600'000);  // the wall clock goes back an hour
  tokens.push_back(Acquire("k", "a", 1000));
  tokens.push_back(Acquire("other", "a", 1000));
  for (std::size_t i = 1; i < tokens.size(); ++i) EXPECT_GT(tokens[i], tokens[i - 1]) << i;
}

TEST_F(LockTableTest, WallClockStepsNeitherFreeNorExtend) {
  ASSERT_NE(Acquire("k", "a", 1000), 0u);
  clock_.step_wall(3'600'000);
  EXPECT_EQ(ValueOf("k"), "a");
  clock_.step_wall(-7'200'000);
  clock_.advance(999);
  EXPECT_EQ(ValueOf("k"), "a");
  clock_.advance(1);
  EXPECT_EQ(ValueOf("k"), "<none>");
}

TEST_F(LockTableTest, WatcherDetachesWhenNothingIsTracked) {
  ASSERT_NE(Acquire("k", "a", 1000), 0u);
  EXPECT_EQ(table().tracked(), 0u) << "a held lock's token lives in its object";
  auto b = std::make_shared<Recorder>();
  Park("k", "b", 1000, b);
  EXPECT_EQ(table().tracked(), 1u) << "a key with waiters is tracked";
  ASSERT_EQ(Release("k", H("k"), "a", now()), 1);
  ASSERT_EQ(b->tokens.size(), 1u);
  EXPECT_EQ(table().tracked(), 0u) << "the queue is empty once b has the key";
  // With no watcher, removals are plain again: deleting an unrelated key grants nothing.
  Set(nullptr, "x", "v", false);
  Erase(Get("x"));
  EXPECT_EQ(shard().size(), 1u);
  EXPECT_EQ(ValueOf("k"), "b");
}

// The fencing token is part of the key's object: no side entry per held lock, LOCK.INFO
// reads it, a plain SET over the key keeps it (LOCKS.md), even when the value grows past the
// block and the object moves, and a key re-created by SET has none.
TEST_F(LockTableTest, TokenLivesInTheObject) {
  std::vector<std::uint64_t> tokens;
  for (int i = 0; i < 1000; ++i) {
    tokens.push_back(Acquire("k" + std::to_string(i), "owner-" + std::to_string(i), 1000));
  }
  EXPECT_EQ(table().tracked(), 0u);
  for (int i = 0; i < 1000; i += 97) {
    const std::string key = "k" + std::to_string(i);
    auto info = table().Info(key, H(key), now());
    ASSERT_TRUE(info.has_value());
    EXPECT_EQ(info->token, tokens[static_cast<std::size_t>(i)]);
    EXPECT_EQ(info->owner, "owner-" + std::to_string(i));
  }
  Object* o = Get("k1");
  Object* moved = Set(o, "k1", std::string(4096, 'x'), true);
  EXPECT_NE(moved, o) << "a value this long cannot fit the lock's block";
  EXPECT_EQ(table().Info("k1", H("k1"), now())->token, tokens[1]);
  EXPECT_EQ(table().Info("k1", H("k1"), now())->owner, std::string(4096, 'x'));
  Erase(Get("k2"));
  Set(nullptr, "k2", "plain", false);
  EXPECT_FALSE(table().Info("k2", H("k2"), now())->token.has_value());
}

}  // namespace
}  // namespace latch::store
