// The Op layer without sockets: the slab, objects, a shard's lazy and active expiry, the keyspace's
// hash-ordered sharding. Time is passed in explicitly, so no clock is needed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "store/handle_table.h"
#include "store/key_batch.h"
#include "store/keyspace.h"
#include "store/object.h"
#include "store/shard.h"
#include "store/slab.h"

namespace latch::store {
namespace {

constexpr std::int64_t kStoreT0 = 1'000'000;

Object* Put(Shard& s, const std::string& key, const std::string& value, std::int64_t now,
            std::int64_t deadline = 0) {
  Object* o = s.Find(key, HashKey(key), now);
  o = s.Put(o, key, HashKey(key), value, deadline ? Expiry::At(deadline) : Expiry::Clear());
  return o;
}

Object* StoreGet(Shard& s, const std::string& key, std::int64_t now) {
  return s.Find(key, HashKey(key), now);
}

TEST(HandleTable, MatchesAModelThroughGrowthAndDeletes) {
  // Handles stand for keys "k<handle>"; hashes are drawn from a small range on purpose, so
  // many keys share their low 32 bits (found only by comparing keys) and long runs form.
  HandleTable t;
  std::map<std::uint32_t, std::uint64_t> model;  // handle -> hash
  std::mt19937_64 rng(11);
  auto key_of = [](std::uint32_t h) { return "k" + std::to_string(h); };
  auto find = [&](std::uint32_t h, std::uint64_t hash) {
    return t.Find(key_of(h), hash, [&](std::uint32_t x) { return key_of(x); });
  };
  for (int step = 0; step < 60000; ++step) {
    const auto handle = static_cast<std::uint32_t>(1 + rng() % 5000);
    const std::uint64_t hash = rng() % 4 == 0 ? rng() % 64 : rng();
    auto it = model.find(handle);
    switch (rng() % 3) {
      case 0:
        if (it == model.end()) {
          t.Insert(handle, hash);
          model[handle] = hash;
        }
        break;
      case 1:
        if (it != model.end()) {
          ASSERT_TRUE(t.Erase(handle, it->second));
          model.erase(it);
        } else {
          ASSERT_FALSE(t.Erase(handle, hash));
        }
        break;
      case 2:
        if (it != model.end()) {
          HandleTable::Slot* s = find(handle, it->second);
          ASSERT_NE(s, nullptr) << "step " << step;
          ASSERT_EQ(s->handle, handle);
          if (rng() % 2) {
            t.EraseSlot(s);
            model.erase(it);
          }
        } else {
          ASSERT_EQ(find(handle, hash), nullptr) << "step " << step;
        }
        break;
    }
    ASSERT_EQ(t.size(), model.size());
    ASSERT_LE(t.size(), t.bucket_count() * HandleTable::kMaxLoad);
  }
  std::map<std::uint32_t, int> seen;
  t.ForEach([&](std::uint32_t h) { ++seen[h]; });
  ASSERT_EQ(seen.size(), model.size());
  for (const auto& [h, hash] : model) {
    EXPECT_EQ(seen[h], 1);
    EXPECT_NE(find(h, hash), nullptr);
  }
  const std::size_t n = model.size();
  EXPECT_GE(t.bucket_count(), n);
  t.Reset();
  EXPECT_EQ(t.size(), 0u);
  EXPECT_EQ(t.bucket_count(), 0u);
  EXPECT_EQ(find(1, 1), nullptr);
}

TEST(Slab, BlocksKeepTheirBytesAndHandlesRoundTrip) {
  // Random sizes across small classes and heap blocks; a pattern per block, freed in random
  // order and reallocated: no block may see another's bytes, and every handle must lead
  // back to its block and its block to the handle.
  Slab slab;
  const std::size_t bytes_before = Slab::Bytes();
  std::mt19937 rng(7);
  struct Block {
    std::uint32_t handle;
    std::size_t size;
    char fill;
  };
  std::vector<Block> live;
  auto check = [&](const Block& b) {
    const char* p = static_cast<const char*>(slab.Get(b.handle));
    ASSERT_EQ(Slab::HandleOf(p), b.handle);
    ASSERT_GE(slab.Capacity(b.handle), b.size);
    for (std::size_t i = 0; i < b.size; ++i) ASSERT_EQ(p[i], b.fill) << "byte " << i;
  };
  for (int round = 0; round < 6; ++round) {
    for (int i = 0; i < 3000; ++i) {
      const std::size_t size = rng() % 10 == 0 ? 1000 + rng() % 5000 : 1 + rng() % 200;
      Block b{0, size, static_cast<char>('a' + rng() % 26)};
      std::size_t capacity = 0;
      void* p = slab.Allocate(size, &b.handle, &capacity);
      ASSERT_GE(b.handle, Slab::kFirstHandle);
      ASSERT_EQ(reinterpret_cast<std::uintptr_t>(p) % 8, 0u);
      ASSERT_GE(capacity, size);
      std::memset(p, b.fill, size);
      live.push_back(b);
    }
    std::shuffle(live.begin(), live.end(), rng);
    for (const Block& b : live) check(b);
    const std::size_t keep = live.size() / 3;
    for (std::size_t i = keep; i < live.size(); ++i) slab.Free(live[i].handle);
    live.resize(keep);
    for (const Block& b : live) check(b);
  }
  EXPECT_GT(Slab::Bytes(), bytes_before);
  for (const Block& b : live) slab.Free(b.handle);
  EXPECT_EQ(slab.pages_in_use(), 0u) << "a page whose blocks are all freed is given back";
  EXPECT_EQ(Slab::Bytes(), bytes_before);
}

TEST(Slab, ClearDropsEverythingAndTheSlabServesAgain) {
  Slab slab;
  const std::size_t bytes_before = Slab::Bytes();
  std::uint32_t h;
  std::size_t cap;
  for (int i = 0; i < 5000; ++i) slab.Allocate(48, &h, &cap);
  slab.Allocate(100000, &h, &cap);
  EXPECT_GE(slab.pages_in_use(), 5000u * 48 / Slab::kPageSize);
  slab.Clear();
  EXPECT_EQ(slab.pages_in_use(), 0u);
  EXPECT_EQ(Slab::Bytes(), bytes_before);
  void* p = slab.Allocate(48, &h, &cap);
  std::memset(p, 'x', 48);
  EXPECT_EQ(slab.Get(h), p);
}

TEST(Slab, TrimReturnsOnlyPagesIdleForAWholeWindow) {
  Slab slab;
  constexpr std::int64_t t = 5'000'000;
  std::vector<std::uint32_t> handles;
  std::uint32_t h;
  std::size_t cap;
  for (int i = 0; i < 800; ++i) {
    slab.Allocate(1000, &h, &cap);
    handles.push_back(h);
  }
  ASSERT_EQ(slab.pages_in_use(), 200u);  // four 1000-byte blocks fit a page
  for (std::uint32_t x : handles) slab.Free(x);
  EXPECT_EQ(slab.warm_free_pages(), 200u);
  slab.Trim(t);  // a window starts
  // Churn within the window: half the pages are taken again and freed; the other half is
  // idle the whole time.
  for (int i = 0; i < 400; ++i)
    handles[static_cast<std::size_t>(i)] = [&] {
      slab.Allocate(1000, &h, &cap);
      return h;
    }();
  for (int i = 0; i < 400; ++i) slab.Free(handles[static_cast<std::size_t>(i)]);
  slab.Trim(t + Slab::kIdleMs - 1);
  EXPECT_EQ(slab.returned_pages(), 0u) << "nothing is returned within the first second";
  slab.Trim(t + Slab::kIdleMs);
  // 100 pages stayed idle the whole window; the warm reserve stays.
  const std::size_t idle = 200 - 100;
  EXPECT_EQ(slab.returned_pages(), idle - Slab::kWarmPages);
  EXPECT_EQ(slab.warm_free_pages(), 200 - (idle - Slab::kWarmPages));
  // A returned page serves again (the kernel gives a zero page on touch).
  for (int i = 0; i < 800; ++i) {
    char* p = static_cast<char*>(slab.Allocate(1000, &h, &cap));
    std::memset(p, 'z', 1000);
    ASSERT_EQ(Slab::HandleOf(p), h);
  }
  EXPECT_EQ(slab.returned_pages(), 0u);
}

std::size_t ResidentBytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  unsigned long size = 0, resident = 0;
  if (f != nullptr) {
    if (std::fscanf(f, "%lu %lu", &size, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return resident * 4096;
}

TEST(Slab, TrimGivesTheMemoryOfAMassDeleteBackToTheKernel) {
  Slab slab;
  std::vector<std::uint32_t> handles;
  std::uint32_t h;
  std::size_t cap;
  for (int i = 0; i < 200'000; ++i) {  // ~64 MB of 320-byte blocks
    std::memset(slab.Allocate(320, &h, &cap), 'x', 320);
    handles.push_back(h);
  }
  const std::size_t full = ResidentBytes();
  for (std::uint32_t x : handles) slab.Free(x);
  std::int64_t now = 1'000'000;
  for (int i = 0; i < 200 && slab.warm_free_pages() > Slab::kWarmPages; ++i, now += 100) {
    slab.Trim(now);
  }
  EXPECT_EQ(slab.warm_free_pages(), Slab::kWarmPages);
  EXPECT_LT(ResidentBytes() + 50'000'000, full) << "the pages' memory went back";
}

TEST(Shard, ObjectHoldsKeyValueAndTokenThroughRewrites) {
  Shard s(0, kStoreT0);
  Object* plain = Put(s, "k", "v", kStoreT0);
  EXPECT_EQ(plain->token(), 0u);
  Object* lock = s.Put(nullptr, "lock:seat-A1", HashKey("lock:seat-A1"), "owner-token",
                       Expiry::Clear(), 1'796'000'000'000'000'042ULL);
  EXPECT_EQ(lock->key(), "lock:seat-A1") << "the token does not shift the key";
  EXPECT_EQ(lock->value(), "owner-token");
  EXPECT_EQ(lock->token(), 1'796'000'000'000'000'042ULL);
  Object* same = s.Put(lock, "lock:seat-A1", HashKey("lock:seat-A1"), "other", Expiry::Clear());
  EXPECT_EQ(same, lock) << "a value that fits the block is rewritten in place";
  EXPECT_EQ(same->token(), 1'796'000'000'000'000'042ULL);
  EXPECT_EQ(same->key(), "lock:seat-A1");
  for (std::size_t size : {100u, 1000u, 5000u, 3u}) {
    const std::string value(size, static_cast<char>('a' + size % 26));
    Object* moved = s.Put(same, "lock:seat-A1", HashKey("lock:seat-A1"), value, Expiry::Clear());
    EXPECT_EQ(moved->token(), 1'796'000'000'000'000'042ULL) << "kept when the block moves";
    EXPECT_EQ(moved->key(), "lock:seat-A1");
    EXPECT_EQ(moved->value(), value);
    EXPECT_EQ(StoreGet(s, "lock:seat-A1", kStoreT0), moved) << "the set follows the move";
    same = moved;
  }
  // A value given as a view into the object's own value (a script re-setting what it read).
  Object* big =
      s.Put(same, "lock:seat-A1", HashKey("lock:seat-A1"), std::string(300, 'q'), Expiry::Clear());
  Object* grown =
      s.Put(big, "lock:seat-A1", HashKey("lock:seat-A1"), big->value(), Expiry::Clear());
  EXPECT_EQ(grown->value(), std::string(300, 'q'));
  EXPECT_EQ(plain->value(), "v") << "the other key is untouched";
  EXPECT_EQ(s.size(), 2u);
}

TEST(Shard, ClearGivesTheTableBack) {
  Shard s(0, kStoreT0);
  for (int i = 0; i < 10000; ++i) Put(s, "key:" + std::to_string(i), "v", kStoreT0);
  const std::size_t full = s.buckets();
  EXPECT_GE(full, 10000u);
  EXPECT_LE(full, 10000u * 2) << "grown by half under a 0.9 load factor, not doubled at 0.5";
  s.Clear();
  EXPECT_EQ(s.size(), 0u);
  EXPECT_LT(s.buckets(), 64u) << "FLUSHALL frees the buckets, not only the keys";
  Put(s, "again", "v", kStoreT0);
  EXPECT_NE(StoreGet(s, "again", kStoreT0), nullptr);
}

TEST(Shard, LazyExpiryHidesAKeyAtItsDeadline) {
  Shard s(0, kStoreT0);
  Put(s, "k", "v", kStoreT0, kStoreT0 + 100);
  EXPECT_NE(StoreGet(s, "k", kStoreT0 + 99), nullptr);
  EXPECT_EQ(StoreGet(s, "k", kStoreT0 + 100), nullptr) << "visible at its deadline";
  EXPECT_EQ(s.size(), 0u) << "the lookup reclaimed it";
  EXPECT_EQ(s.expires(), 0u);
  EXPECT_EQ(s.expired_total(), 1u);
}

TEST(Shard, SetClearsTtlUnlessKept) {
  Shard s(0, kStoreT0);
  Object* o = Put(s, "k", "v", kStoreT0, kStoreT0 + 100);
  o = s.Put(o, "k", HashKey("k"), "w", Expiry::Keep());
  EXPECT_EQ(o->expire_at(), kStoreT0 + 100);
  // Growing the value moves the block: the TTL must move with it.
  o = s.Put(o, "k", HashKey("k"), std::string(500, 'z'), Expiry::Keep());
  EXPECT_EQ(o->expire_at(), kStoreT0 + 100);
  EXPECT_EQ(s.expires(), 1u);
  EXPECT_EQ(s.ExpireDue(kStoreT0 + 100, 10), 1u) << "the moved block is on the wheel";
  EXPECT_EQ(s.size(), 0u);

  o = Put(s, "k", "v", kStoreT0, kStoreT0 + 100);
  o = s.Put(o, "k", HashKey("k"), "w", Expiry::Clear());
  EXPECT_FALSE(o->has_expire());
  EXPECT_EQ(s.expires(), 0u);
  EXPECT_EQ(s.ExpireDue(kStoreT0 + 1000, 10), 0u);
  EXPECT_NE(StoreGet(s, "k", kStoreT0 + 1000), nullptr);
}

TEST(Shard, ActiveExpiryIsBoundedPerCall) {
  Shard s(0, kStoreT0);
  for (int i = 0; i < 2500; ++i)
    Put(s, "k" + std::to_string(i), "v", kStoreT0, kStoreT0 + 1 + i % 50);
  Put(s, "forever", "v", kStoreT0);
  EXPECT_EQ(s.ExpireDue(kStoreT0, 1000), 0u) << "nothing is due yet";
  EXPECT_EQ(s.ExpireDue(kStoreT0 + 50, 1000), 1000u);
  EXPECT_EQ(s.ExpireDue(kStoreT0 + 50, 1000), 1000u);
  EXPECT_EQ(s.ExpireDue(kStoreT0 + 50, 1000), 500u);
  EXPECT_EQ(s.size(), 1u);
  EXPECT_EQ(s.expired_total(), 2500u);
}

TEST(Shard, ExpiryFollowsDeadlinesExactlyUnderRandomOperations) {
  // A model (map of key -> deadline) against the shard, with random sets, TTL changes,
  // deletes and time steps; every key's visibility must match the model at every step.
  Shard s(0, kStoreT0);
  std::map<std::string, std::int64_t> model;  // 0 = no deadline
  std::map<std::string, std::string> values;
  std::mt19937 rng(42);
  std::int64_t now = kStoreT0;
  for (int step = 0; step < 20000; ++step) {
    std::string key = "k" + std::to_string(rng() % 64);
    switch (rng() % 5) {
      case 0:
      case 1: {
        std::int64_t d = rng() % 3 ? now + 1 + static_cast<std::int64_t>(rng() % 200) : 0;
        // Sizes across slab classes and heap blocks, so rewrites move blocks too.
        const std::size_t size = rng() % 8 == 0 ? 1100 + rng() % 2000 : rng() % 300;
        std::string value = std::to_string(step) + std::string(size, 'v');
        Put(s, key, value, now, d);
        model[key] = d;
        values[key] = std::move(value);
        break;
      }
      case 2:
        if (Object* o = StoreGet(s, key, now)) {
          s.Erase(o, HashKey(o->key()));
          model.erase(key);
        }
        break;
      case 3:
        now += static_cast<std::int64_t>(rng() % 50);
        if (rng() % 2) s.ExpireDue(now, 7);
        break;
      case 4:
        if (Object* o = StoreGet(s, key, now)) {
          std::int64_t d = now + 1 + static_cast<std::int64_t>(rng() % 100);
          s.SetDeadline(o, HashKey(o->key()), d);
          model[key] = d;
        }
        break;
    }
    for (auto it = model.begin(); it != model.end();) {
      if (it->second != 0 && it->second <= now) {
        it = model.erase(it);
      } else {
        ++it;
      }
    }
    std::string probe = "k" + std::to_string(rng() % 64);
    const Object* found = StoreGet(s, probe, now);
    ASSERT_EQ(found != nullptr, model.count(probe) == 1) << "step " << step << " key " << probe;
    if (found != nullptr) {
      ASSERT_EQ(found->value(), values[probe]) << "step " << step;
    }
  }
}

// Records the keys of each event as "<kind> <key>".
class EventLog final : public KeyEvents {
 public:
  void OnModified(Shard&, const KeyEvent& e) override { Add(e); }
  Object* OnGone(Shard&, const KeyEvent& e) override {
    Add(e);
    return nullptr;
  }
  void OnCleared(Shard&) override { log.push_back("cleared"); }
  std::vector<std::string> log;

 private:
  void Add(const KeyEvent& e) {
    static constexpr const char* kNames[] = {"written", "expire", "deleted", "expired"};
    log.push_back(std::string(kNames[static_cast<int>(e.kind)]) + " " + std::string(e.key));
  }
};

// The batch delete of DEL k1 ... kN: one probe per key (Shard::Delete), prefetching ahead
// (ForEachKeyPrefetched). Every key here has the same hash, or one of two, so the index
// holds long runs of equal hash bits that only a key comparison tells apart, and entries
// shift back under the prefetches as keys leave.
TEST(Shard, BatchDeleteOfCollidingKeysRemovesEachOnceInOrder) {
  Shard s(0, kStoreT0);
  EventLog events;
  s.set_events(&events);
  constexpr std::uint64_t kH = 0x1234'5678'9abc'def0ull, kOther = kH + 1;
  std::vector<std::string> names;
  for (int i = 0; i < 60; ++i) names.push_back("k" + std::to_string(i));
  for (int i = 0; i < 60; ++i) {
    const std::uint64_t h = i % 3 == 0 ? kOther : kH;
    s.Put(nullptr, names[i], h, "v", i == 5 ? Expiry::At(kStoreT0 + 10) : Expiry::Clear());
  }
  events.log.clear();
  // Delete the kH keys, each named twice, plus one never set; k5 has expired by then.
  std::vector<KeyRef> refs;
  std::vector<std::string> want;
  const std::string missing = "absent";
  for (int i = 0; i < 60; ++i) {
    if (i % 3 == 0) continue;
    refs.push_back(KeyRef{names[i], kH, &s});
    refs.push_back(KeyRef{names[i], kH, &s});
    want.push_back((i == 5 ? "expired " : "deleted ") + names[i]);
  }
  refs.push_back(KeyRef{missing, kH, &s});
  int deleted = 0;
  ForEachKeyPrefetched(refs, [&](const KeyRef& k) {
    if (s.Delete(k.key, k.hash, kStoreT0 + 20)) ++deleted;
  });
  EXPECT_EQ(deleted, 39) << "40 keys of hash kH, one of them expired: 39 deletes";
  EXPECT_EQ(events.log, want) << "one event per key, in argument order";
  EXPECT_EQ(s.size(), 20u);
  for (int i = 0; i < 60; ++i) {
    const std::uint64_t h = i % 3 == 0 ? kOther : kH;
    EXPECT_EQ(s.Find(names[i], h, kStoreT0 + 20) != nullptr, i % 3 == 0) << names[i];
  }
  s.set_events(nullptr);
}

TEST(Keyspace, ShardsAreContiguousRangesOfTheHash) {
  Keyspace ks(16, kStoreT0);
  std::vector<std::uint64_t> hashes;
  for (int i = 0; i < 2000; ++i) hashes.push_back(HashKey("key:" + std::to_string(i)));
  std::sort(hashes.begin(), hashes.end());
  int last = -1;
  std::set<int> seen;
  for (auto h : hashes) {
    int idx = ks.ShardIndex(h);
    EXPECT_GE(idx, last) << "shard index must not decrease with the hash";
    last = idx;
    seen.insert(idx);
  }
  EXPECT_EQ(seen.size(), 16u) << "2000 keys reach every shard";
  EXPECT_THROW(Keyspace(12, kStoreT0), std::invalid_argument);
  Keyspace one(1, kStoreT0);
  EXPECT_EQ(one.ShardIndex(~0ull), 0);
}

}  // namespace
}  // namespace latch::store
