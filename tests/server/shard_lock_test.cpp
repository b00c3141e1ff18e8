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

}  // namespace
}  // namespace latch
