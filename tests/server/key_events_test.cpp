// Key events: every write reaches the shard's one hook exactly once, in the order applied,
// whoever makes it (an Op, a lock hand-off, lazy or active expiry, a flush), and the router
// hands each event to WATCH, the lock waiters and an attached journal. The recording journal
// here is what an append-only file would hang off (KeyEventRouter::set_journal).
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
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

// The journal slot is switched while writers run (CONFIG SET appendonly; a database created
// after Persistence::Attach took its shard locks is not held by it): the slot is an atomic,
// so a writer sees the old or the new journal, and under TSan no data race is reported.
// Bounded: fixed counts.
TEST(KeyEventRouterTest, JournalSlotSwitchesWhileWritersRun) {
  ManualClock clock;
  store::Keyspace keyspace{4, clock.MonoMs()};
  store::LockTables locks{keyspace, clock};
  WatchRegistry watches;
  KeyEventRouter router{keyspace, locks, watches};
  // Counts the events it is given; the count is atomic, the events arrive on writer threads.
  class CountingJournal final : public store::KeyEvents {
   public:
    void OnModified(store::Shard&, const KeyEvent&) override { ++events; }
    store::Object* OnGone(store::Shard&, const KeyEvent&) override {
      ++events;
      return nullptr;
    }
    void OnCleared(store::Shard&) override { ++events; }
    std::atomic<int> events{0};
  } journal;
  constexpr int kWriters = 2, kWrites = 20000, kSwitches = 20000;
  std::atomic<int> writers_done{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      const std::string key = "k" + std::to_string(w);
      const std::uint64_t h = store::HashKey(key);
      const store::KeyRef ref{key, h, &keyspace.ShardFor(h)};
      for (int i = 0; i < kWrites; ++i) {
        std::lock_guard lock(ref.shard->mu());
        store::OpSet(ref, std::to_string(i), {}, store::OpEnv{clock.Now(), &locks.stats()},
                     nullptr);
      }
      ++writers_done;
    });
  }
  // No shard lock here: only the slot's own ordering protects the switch.
  for (int i = 0; i < kSwitches && writers_done < kWriters; ++i) {
    router.set_journal(i % 2 == 0 ? &journal : nullptr);
  }
  for (std::thread& t : threads) t.join();
  EXPECT_LE(journal.events.load(), kWriters * kWrites);
  router.set_journal(&journal);
  const int before = journal.events.load();
  {
    const std::uint64_t h = store::HashKey("after");
    const store::KeyRef ref{"after", h, &keyspace.ShardFor(h)};
    std::lock_guard lock(ref.shard->mu());
    store::OpSet(ref, "v", {}, store::OpEnv{clock.Now(), &locks.stats()}, nullptr);
  }
  EXPECT_EQ(journal.events.load(), before + 1);
  router.set_journal(nullptr);
}

}  // namespace
}  // namespace latch
