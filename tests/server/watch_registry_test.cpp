// WATCH marks, through the shards' key events: exactly the watchers of the keys written are
// marked, whatever shard each key is on and however many writers run at once (the registry
// is striped like the keyspace; before, one mutex served every shard).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "key_event_router.h"
#include "store/shard_guard.h"
#include "store/string_ops.h"

namespace latch {
namespace {

class WatchRegistryTest : public ::testing::Test {
 protected:
  store::KeyRef Ref(std::string_view key) {
    const std::uint64_t h = store::HashKey(key);
    return store::KeyRef{key, h, &keyspace_.ShardFor(h)};
  }
  // SET key value as a command does it: holding the key's shard.
  void Set(std::string_view key, std::string_view value) {
    const store::KeyRef ref = Ref(key);
    ASSERT_TRUE(store::LockShard(*ref.shard, nullptr));
    const store::OpEnv env{clock_.Now(), &locks_.stats()};
    EXPECT_EQ(store::OpSet(ref, value, {}, env, nullptr), store::OpStatus::kOk);
    store::UnlockShard(*ref.shard);
  }

  ManualClock clock_;
  store::Keyspace keyspace_{16, clock_.MonoMs()};
  store::LockTables locks_{keyspace_, clock_};
  WatchRegistry watches_;
  KeyEventRouter router_{keyspace_, locks_, watches_};
};

// Keys spread over every shard, one watcher each (and one watcher of all of them); four
// writers at once, each writing its own keys many times and, once, the odd-numbered watched
// keys of its share. Only those watchers are marked.
TEST_F(WatchRegistryTest, ConcurrentWritersOnEveryShardMarkExactlyTheWrittenKeys) {
  constexpr std::size_t kWatched = 64;
  constexpr std::size_t kWriters = 4;
  constexpr std::size_t kWritesEach = 5000;
  std::vector<std::string> keys;
  std::vector<bool> shard_seen(static_cast<std::size_t>(keyspace_.shard_count()));
  for (std::size_t i = 0; i < kWatched; ++i) {
    keys.push_back("watched:" + std::to_string(i));
    shard_seen[static_cast<std::size_t>(Ref(keys.back()).shard->index())] = true;
  }
  for (bool seen : shard_seen) ASSERT_TRUE(seen) << "the keys cover every shard";
  std::vector<std::unique_ptr<WatchRegistry::Watcher>> watchers;
  WatchRegistry::Watcher all;
  for (const std::string& k : keys) {
    watchers.push_back(std::make_unique<WatchRegistry::Watcher>());
    watches_.Watch(0, k, watchers.back().get());
    watches_.Watch(0, k, &all);
    watches_.Watch(1, k, &all);  // the same names in another database: never written
  }
  std::vector<std::thread> writers;
  for (std::size_t t = 0; t < kWriters; ++t) {
    writers.emplace_back([&, t] {
      for (std::size_t i = 0; i < kWritesEach; ++i) {
        Set("other:" + std::to_string(t) + ":" + std::to_string(i % 97), "v");
        if (i < kWatched && i % kWriters == t && i % 2 == 1) Set(keys[i], "x");
      }
    });
  }
  for (auto& t : writers) t.join();
  for (std::size_t i = 0; i < kWatched; ++i) {
    EXPECT_EQ(watchers[i]->dirty.load(), i % 2 == 1) << keys[i];
  }
  EXPECT_TRUE(all.dirty.load());
  for (std::size_t i = 0; i < kWatched; ++i) {
    watches_.Unwatch({0}, {keys[i]}, watchers[i].get());
    watches_.Unwatch({0, 1}, {keys[i], keys[i]}, &all);
  }
  EXPECT_FALSE(watches_.active()) << "every registration removed";
}

// A watcher of keys in two databases: a write marks it only through the database watched;
// a flush marks it only for a watched key that exists in the flushed database.
TEST_F(WatchRegistryTest, DatabasesAndFlushesMarkAsBefore) {
  WatchRegistry::Watcher w;
  watches_.Watch(1, "k", &w);
  Set("k", "v");  // database 0 (the router's lone keyspace)
  EXPECT_FALSE(w.dirty.load());
  watches_.Watch(0, "missing", &w);
  for (int i = 0; i < keyspace_.shard_count(); ++i) keyspace_.shard(i).Clear();
  EXPECT_FALSE(w.dirty.load()) << "a flush marks existing keys only";
  Set("k2", "v");
  watches_.Watch(0, "k2", &w);
  for (int i = 0; i < keyspace_.shard_count(); ++i) keyspace_.shard(i).Clear();
  EXPECT_TRUE(w.dirty.load()) << "a flush marks a watched key that existed";
  watches_.Unwatch({1, 0, 0}, {"k", "missing", "k2"}, &w);
  EXPECT_FALSE(watches_.active());
}

}  // namespace
}  // namespace latch
