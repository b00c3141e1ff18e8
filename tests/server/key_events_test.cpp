// Key events: every write reaches the shard's one hook exactly once, in the order applied,
// whoever makes it (an Op, a lock hand-off, lazy or active expiry, a flush), and the router
// hands each event to WATCH, the lock waiters and an attached journal. The recording journal
// here is what an append-only file would hang off (KeyEventRouter::set_journal).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "key_event_router.h"
#include "store/key_ops.h"
#include "store/lock_ops.h"
#include "store/string_ops.h"

namespace latch {
namespace {

using store::KeyEvent;

// Records each event as "<kind> <key> <value> <deadline>" (value and deadline of the object
// the event carries).
class RecordingJournal final : public store::KeyEvents {
 public:
  void OnModified(store::Shard&, const KeyEvent& e) override { Record(e); }
  store::Object* OnGone(store::Shard&, const KeyEvent& e) override {
    Record(e);
    return nullptr;
  }
  void OnCleared(store::Shard&) override { log.push_back("cleared"); }
  std::vector<std::string> log;

 private:
  void Record(const KeyEvent& e) {
    static constexpr const char* kNames[] = {"written", "expire", "deleted", "expired"};
    log.push_back(std::string(kNames[static_cast<int>(e.kind)]) + " " + std::string(e.key) + " " +
                  std::string(e.object->value()) + " " + std::to_string(e.object->expire_at()));
  }
};

class KeyEventsTest : public ::testing::Test {
 protected:
  KeyEventsTest() { router_.set_journal(&journal_); }
  ~KeyEventsTest() override { router_.set_journal(nullptr); }

  store::KeyRef Ref(std::string_view key) {
    const std::uint64_t h = store::HashKey(key);
    return store::KeyRef{key, h, &keyspace_.ShardFor(h)};
  }
  store::OpEnv Env() { return store::OpEnv{clock_.Now(), &locks_.stats()}; }
  std::int64_t Mono() const { return clock_.MonoMs(); }

  ManualClock clock_;
  store::Keyspace keyspace_{4, clock_.MonoMs()};
  store::LockTables locks_{keyspace_, clock_};
  WatchRegistry watches_;
  KeyEventRouter router_{keyspace_, locks_, watches_};
  RecordingJournal journal_;
};

TEST_F(KeyEventsTest, EachOpReportsItsEffectiveWriteOnce) {
  store::SetParams px;
  px.expiry = store::Expiry::At(Mono() + 1000);
  ASSERT_EQ(store::OpSet(Ref("k"), "v1", px, Env(), nullptr), store::OpStatus::kOk);
  store::SetParams nx;
  nx.cond = store::SetParams::Cond::kNx;
  ASSERT_EQ(store::OpSet(Ref("k"), "v2", nx, Env(), nullptr), store::OpStatus::kNotMet);
  std::int64_t n = 0;
  ASSERT_EQ(store::OpIncrBy(Ref("n"), 5, Env(), &n), store::OpStatus::kOk);
  store::ExpireParams ex{.deadline_ms = Mono() + 50, .flags = 0};
  ASSERT_EQ(store::OpExpire(Ref("n"), ex, Env()), store::OpStatus::kOk);
  ASSERT_TRUE(store::OpDel(Ref("k"), Env()));
  const std::string k1000 = std::to_string(Mono() + 1000), n50 = std::to_string(Mono() + 50);
  EXPECT_EQ(journal_.log, (std::vector<std::string>{"written k v1 " + k1000, "written n 5 0",
                                                    "expire n 5 " + n50, "deleted k v1 " + k1000}))
      << "a refused SET NX reports nothing";
  journal_.log.clear();
  clock_.advance(60);
  store::Shard& s = *Ref("n").shard;
  EXPECT_EQ(s.ExpireDue(Mono(), 10), 1u);
  EXPECT_EQ(journal_.log, (std::vector<std::string>{"expired n 5 " + n50}));
}

// The waiter is told of its grant only once the journal has its record (it replies with that
// record's number, so the reply waits for the disk): claimed first, told last.
TEST_F(KeyEventsTest, AHandOffIsARemovalThenAGrantAndWatchSeesBoth) {
  store::LockTable& table = locks_.ForShard(Ref("lock").shard->index());
  ASSERT_NE(store::OpAcquire(table, Ref("lock"), "a", 1000, clock_.Now()), 0u);
  store::LockWaiter w;
  w.owner = "b";
  w.ttl_ms = 500;
  std::vector<std::string> at_claim, at_grant;
  w.claim = [&] {
    at_claim = journal_.log;
    return true;
  };
  w.grant = [&](std::uint64_t) { at_grant = journal_.log; };
  table.Enqueue("lock", store::HashKey("lock"), std::move(w));
  WatchRegistry::Watcher watcher;
  watches_.Watch(0, "lock", &watcher);
  journal_.log.clear();
  ASSERT_EQ(store::OpRelease(table, Ref("lock"), "a", clock_.Now()), store::OpStatus::kOk);
  EXPECT_EQ(journal_.log,
            (std::vector<std::string>{"deleted lock a " + std::to_string(Mono() + 1000),
                                      "written lock b " + std::to_string(Mono() + 500)}));
  EXPECT_EQ(at_claim.size(), 1u) << "claimed after the removal, before the grant's write";
  EXPECT_EQ(at_grant, journal_.log) << "told after the journal has the grant's record";
  EXPECT_TRUE(watcher.dirty);
  watches_.Unwatch({0}, {"lock"}, &watcher);
}

TEST_F(KeyEventsTest, FlushReportsOnceAndMarksEveryWatcher) {
  ASSERT_EQ(store::OpSet(Ref("x"), "1", {}, Env(), nullptr), store::OpStatus::kOk);
  WatchRegistry::Watcher watcher;
  watches_.Watch(0, "x", &watcher);
  journal_.log.clear();
  for (int i = 0; i < keyspace_.shard_count(); ++i) keyspace_.shard(i).Clear();
  EXPECT_EQ(journal_.log.size(), static_cast<std::size_t>(keyspace_.shard_count()));
  EXPECT_TRUE(watcher.dirty);
  EXPECT_EQ(keyspace_.TotalKeys(), 0u);
  watches_.Unwatch({0}, {"x"}, &watcher);
}

}  // namespace
}  // namespace latch
