// Held-shard tracking and the lock waits of commands/key_lock.h: any number of held shards is
// tracked (the old table silently stopped at 64, and a nested guard past it locked a mutex
// twice), shards are taken once each, and a client's wait gives up when the busy flag is set.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "commands/key_lock.h"

namespace latch {
namespace {

TEST(ShardLock, TracksEveryHeldShardWhateverTheirNumber) {
  store::Keyspace ks(256, 0);
  {
    ShardSet all;
    ASSERT_TRUE(all.LockAll(ks, nullptr));
    for (int i = 0; i < ks.shard_count(); ++i) EXPECT_TRUE(store::ThisThreadHolds(ks.shard(i)));
    {
      ShardGuard nested(ks.shard(200));  // held already: a no-op, not a second lock
      std::vector<std::string> names;
      for (int i = 0; i < 2000; ++i) names.push_back("key:" + std::to_string(i));
      std::vector<std::string_view> views(names.begin(), names.end());
      KeyRefs refs;
      refs.Resolve(ks, views);
      ShardSet inner;
      EXPECT_TRUE(inner.Lock(ks, refs.refs(), nullptr));  // every shard held: takes none
    }
    EXPECT_TRUE(store::ThisThreadHolds(ks.shard(200)));
  }
  for (int i = 0; i < ks.shard_count(); ++i) EXPECT_FALSE(store::ThisThreadHolds(ks.shard(i)));
  // Really released: another thread can take every shard.
  auto other = std::async(std::launch::async, [&] {
    for (int i = 0; i < ks.shard_count(); ++i) {
      if (!ks.shard(i).mu().try_lock()) return false;
      ks.shard(i).mu().unlock();
    }
    return true;
  });
  EXPECT_TRUE(other.get());
}

TEST(ShardLock, ClientWaitGivesUpWhenTheBusyFlagIsSet) {
  store::Keyspace ks(4, 0);
  std::atomic<bool> busy{false};
  ShardSet script;  // plays a script holding the keyspace
  ASSERT_TRUE(script.LockAll(ks, nullptr));
  const KeyRef k = Resolve(ks, "k");
  auto waiter = std::async(std::launch::async, [&] {
    ShardSet set;
    return set.Lock(ks, k, &busy);
  });
  EXPECT_EQ(waiter.wait_for(std::chrono::milliseconds(50)), std::future_status::timeout);
  busy = true;
  ASSERT_EQ(waiter.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  EXPECT_FALSE(waiter.get()) << "gave up, holding nothing";
}

// store::LockPhases, which a cluster leader's log listens on (docs/CLUSTER.md, "What a log
// entry is"): every release is reported before the mutex is unlocked, with whether the thread
// then holds none; every lock after it is taken; shards taken again by a nested set (already
// held) report nothing, and a thread with no listener reports nothing.
struct PhaseRecorder final : store::LockPhases {
  std::vector<std::string> seen;
  const store::Shard* watched = nullptr;
  void Releasing(bool last) override {
    // Still locked here: another thread cannot take it.
    const bool locked = watched != nullptr && !std::async(std::launch::async, [s = watched] {
                                                 auto& mu = const_cast<store::Shard*>(s)->mu();
                                                 if (!mu.try_lock()) return false;
                                                 mu.unlock();
                                                 return true;
                                               }).get();
    seen.push_back(std::string(last ? "release-last" : "release") +
                   (locked ? "" : "-after-unlock"));
  }
  void Acquired() override { seen.emplace_back("acquire"); }
};

TEST(ShardLock, LockPhasesSeeEveryReleaseBeforeTheUnlockAndWhetherItWasTheLast) {
  store::Keyspace ks(4, 0);
  PhaseRecorder phases;
  phases.watched = &ks.shard(0);
  store::SetLockPhases(&phases);
  struct Reset {
    ~Reset() { store::SetLockPhases(nullptr); }  // also when an assertion returns early
  } reset;
  {
    ShardSet two;
    ASSERT_TRUE(
        two.Lock(ks, std::vector<KeyRef>{KeyRef{{}, 0, &ks.shard(0)}, KeyRef{{}, 0, &ks.shard(1)}},
                 nullptr));
    EXPECT_EQ(store::ThisThreadHeldCount(), 2);
    ShardGuard nested(ks.shard(1));  // held: takes and releases nothing
  }
  EXPECT_EQ(store::ThisThreadHeldCount(), 0);
  EXPECT_EQ(phases.seen,
            (std::vector<std::string>{"acquire", "acquire", "release", "release-last"}));
  phases.seen.clear();
  phases.watched = &ks.shard(2);
  ASSERT_TRUE(store::TryLockShard(ks.shard(2)));  // the worker tick's
  store::UnlockShard(ks.shard(2));
  EXPECT_EQ(phases.seen, (std::vector<std::string>{"acquire", "release-last"}));
  store::SetLockPhases(nullptr);
  phases.seen.clear();
  { ShardGuard g(ks.shard(3)); }
  EXPECT_TRUE(phases.seen.empty());
}

}  // namespace
}  // namespace latch
