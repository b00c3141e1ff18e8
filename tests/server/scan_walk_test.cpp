// SCAN's walk without sockets (issue 24): HandleTable::ScanFrom resumes from a hash value, not
// a slot, so the table may grow and move entries between steps; each step visits exactly the
// entries between where it starts and where it says to resume. Then the keyspace's cursor
// (store/keyspace_scan.h) over several shards, with keys added and removed between calls.
#include <gtest/gtest.h>

#include <cstdint>
#include <iterator>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "store/handle_table.h"
#include "store/keyspace.h"
#include "store/keyspace_scan.h"
#include "store/shard.h"

namespace latch::store {
namespace {

constexpr std::int64_t kScanT0 = 1'000'000;

// Hash bits drawn so that runs cross the array's end (values near 2^32) and many entries
// want one slot (a narrow range), besides uniform ones.
std::uint64_t DrawHash(std::mt19937_64& rng) {
  switch (rng() % 4) {
    case 0:
      return 0xffffffffu - rng() % 64;
    case 1:
      return rng() % 64;
    case 2:
      return 0x80000000u + rng() % 8;
    default:
      return rng();
  }
}

TEST(ScanWalk, EachStepVisitsExactlyTheEntriesBetweenItsBounds) {
  std::mt19937_64 rng(24);
  for (int round = 0; round < 12; ++round) {
    HandleTable t;
    std::map<std::uint32_t, std::uint32_t> stable;  // handle -> hash bits, never removed
    std::map<std::uint32_t, std::uint32_t> churn;   // added and removed between steps
    std::uint32_t next_handle = 1;
    const int initial = 1 + static_cast<int>(rng() % 3000);
    for (int i = 0; i < initial; ++i) {
      const std::uint64_t hash = DrawHash(rng);
      t.Insert(next_handle, hash);
      stable[next_handle++] = static_cast<std::uint32_t>(hash);
    }
    std::map<std::uint32_t, int> visits;
    std::uint64_t from = 0;
    int steps = 0;
    while (from != HandleTable::kScanEnd) {
      ASSERT_LT(++steps, 100000) << "the walk does not progress";
      const std::size_t want = 1 + rng() % 20;
      std::size_t budget = rng() % 30;
      std::set<std::uint32_t> seen;
      const std::uint64_t resume = t.ScanFrom(static_cast<std::uint32_t>(from), want, &budget,
                                              [&](std::uint32_t handle, std::uint32_t hash) {
                                                EXPECT_GE(hash, from);
                                                EXPECT_TRUE(seen.insert(handle).second);
                                              });
      ASSERT_GT(resume, from) << "round " << round;
      for (const auto& [handle, hash] : stable) {
        const bool inside = hash >= from && hash < resume;
        ASSERT_EQ(seen.count(handle), inside ? 1u : 0u)
            << "round " << round << " step " << steps << " hash " << hash << " in [" << from << ", "
            << resume << ")";
        visits[handle] += inside ? 1 : 0;
      }
      for (std::uint32_t handle : seen) {
        const auto it = stable.find(handle);
        const std::uint32_t hash = it != stable.end() ? it->second : churn.at(handle);
        ASSERT_LT(hash, resume);
      }
      from = resume;
      // Between steps the table grows, and removals move entries back (no tombstones).
      for (int k = static_cast<int>(rng() % 200); k > 0; --k) {
        if (rng() % 2 == 0 || churn.empty()) {
          const std::uint64_t hash = DrawHash(rng);
          t.Insert(next_handle, hash);
          churn[next_handle++] = static_cast<std::uint32_t>(hash);
        } else {
          auto it = churn.begin();
          std::advance(it, static_cast<long>(rng() % churn.size()));
          ASSERT_TRUE(t.Erase(it->first, it->second));
          churn.erase(it);
        }
      }
    }
    for (const auto& [handle, hash] : stable) ASSERT_EQ(visits[handle], 1) << handle;
  }
}

// An empty budget of 0 still moves on: each step passes at least one slot.
TEST(ScanWalk, ProgressesThroughEmptySlotsWithNoBudget) {
  HandleTable t;
  for (std::uint32_t h = 1; h <= 1000; ++h) t.Insert(h, std::uint64_t{h} << 22);
  for (std::uint32_t h = 1; h <= 999; ++h) ASSERT_TRUE(t.Erase(h, std::uint64_t{h} << 22));
  std::uint64_t from = 0;
  int steps = 0, visited = 0;
  while (from != HandleTable::kScanEnd) {
    ASSERT_LT(++steps, 5000);
    std::size_t budget = 0;
    const std::uint64_t resume = t.ScanFrom(static_cast<std::uint32_t>(from), 10, &budget,
                                            [&](std::uint32_t, std::uint32_t) { ++visited; });
    ASSERT_GT(resume, from);
    from = resume;
  }
  EXPECT_EQ(visited, 1);
}

// The keyspace's cursor over 8 shards: keys present for the whole scan come back exactly
// once, the cursor ends at 0, and a call returns what COUNT asks (more only for keys of one
// hash).
TEST(ScanWalk, KeyspaceCursorReturnsStableKeysOnceUnderChurn) {
  Keyspace ks(8, kScanT0);
  auto put = [&](const std::string& key) {
    Shard& s = ks.ShardFor(HashKey(key));
    s.Put(s.Find(key, HashKey(key), kScanT0), key, HashKey(key), "v", Expiry::Clear());
  };
  auto del = [&](const std::string& key) {
    return ks.ShardFor(HashKey(key)).Delete(key, HashKey(key), kScanT0);
  };
  constexpr int kStable = 5000;
  for (int i = 0; i < kStable; ++i) put("stable:" + std::to_string(i));
  std::mt19937_64 rng(7);
  std::map<std::string, int> returned;
  std::vector<std::string> churn;
  int churn_next = 0;
  std::uint64_t cursor = 0;
  int calls = 0;
  do {
    ASSERT_LT(++calls, 20000);
    const std::size_t want = 1 + rng() % 16;
    std::size_t budget = want * 10;
    std::vector<ScanEntry> got;
    for (int i = ks.ShardIndex(cursor); i < ks.shard_count(); ++i) {
      cursor = ScanShard(ks, i, cursor, want - got.size(), &budget, &got);
      if (cursor == 0 || got.size() >= want || budget == 0 || ks.ShardIndex(cursor) == i) break;
    }
    ASSERT_LE(got.size(), want);  // no two keys share a hash here
    for (const ScanEntry& e : got) {
      EXPECT_EQ(e.order, ScanOrder(ks, HashKey(e.key)));
      ++returned[e.key];
    }
    for (int k = static_cast<int>(rng() % 40); k > 0; --k) {
      if (rng() % 3 != 0 || churn.empty()) {
        churn.push_back("churn:" + std::to_string(churn_next++));
        put(churn.back());
      } else {
        const std::size_t at = rng() % churn.size();
        ASSERT_TRUE(del(churn[at]));
        churn.erase(churn.begin() + static_cast<long>(at));
      }
    }
  } while (cursor != 0);
  for (int i = 0; i < kStable; ++i) {
    ASSERT_EQ(returned["stable:" + std::to_string(i)], 1) << i;
  }
  for (const auto& [key, n] : returned) ASSERT_EQ(n, 1) << key;
}

// The scan order keeps the shard in the top bits and is one to one.
TEST(ScanWalk, ScanOrderKeepsTheShardAndIsOneToOne) {
  for (int shards : {1, 2, 16, 1024}) {
    Keyspace ks(shards, kScanT0);
    std::mt19937_64 rng(static_cast<unsigned>(shards));
    std::set<std::uint64_t> hashes, orders;
    for (int i = 0; i < 4000; ++i) {
      // Uniform hashes, and hashes that differ only in their low or only in their high bits.
      const std::uint64_t h = i < 2000   ? rng()
                              : i < 3000 ? (rng() & 0xffffffff00000000u) | (i % 7)
                                         : (std::uint64_t(i % 7) << 40) | 0x1234u;
      ASSERT_EQ(ks.ShardIndex(ScanOrder(ks, h)), ks.ShardIndex(h));
      hashes.insert(h);
      orders.insert(ScanOrder(ks, h));
    }
    EXPECT_EQ(orders.size(), hashes.size());
  }
}

}  // namespace
}  // namespace latch::store
