// The Op layer without sockets: objects, a shard's lazy and active expiry, the keyspace's
// hash-ordered sharding. Time is passed in explicitly, so no clock is needed.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "store/keyspace.h"
#include "store/object.h"
#include "store/shard.h"

namespace latch::store {
namespace {

constexpr std::int64_t kT0 = 1'000'000;

Object* Put(Shard& s, const std::string& key, const std::string& value, std::int64_t now,
            std::int64_t deadline = 0) {
  Object* o = s.Find(key, HashKey(key), now);
  o = s.Set(o, key, value, false);
  if (deadline) s.SetDeadline(o, deadline);
  return o;
}

Object* Get(Shard& s, const std::string& key, std::int64_t now) {
  return s.Find(key, HashKey(key), now);
}

TEST(Object, HoldsKeyAndValueInOneBlock) {
  Object* o = Object::Create("lock:seat-A1", "owner-token");
  EXPECT_EQ(o->key(), "lock:seat-A1");
  EXPECT_EQ(o->value(), "owner-token");
  EXPECT_FALSE(o->has_expire());
  EXPECT_GE(o->allocated_bytes(), sizeof(Object) + 12 + 11);
  Object* same = Object::Assign(o, "short");
  EXPECT_EQ(same, o) << "a smaller value reuses the block";
  EXPECT_EQ(same->value(), "short");
  Object* bigger = Object::Assign(same, std::string(1000, 'x'));
  EXPECT_NE(bigger, same);
  EXPECT_EQ(bigger->key(), "lock:seat-A1");
  EXPECT_EQ(bigger->value(), std::string(1000, 'x'));
  Object::Destroy(same);
  Object::Destroy(bigger);
}

TEST(Object, CarriesAFencingTokenThroughRewrites) {
  Object* plain = Object::Create("k", "v");
  EXPECT_EQ(plain->token(), 0u);
  Object* lock = Object::Create("lock:seat-A1", "owner-token", 1'796'000'000'000'000'042ULL);
  EXPECT_EQ(lock->key(), "lock:seat-A1") << "the token does not shift the key";
  EXPECT_EQ(lock->value(), "owner-token");
  EXPECT_EQ(lock->token(), 1'796'000'000'000'000'042ULL);
  Object* same = Object::Assign(lock, "other");
  EXPECT_EQ(same, lock);
  EXPECT_EQ(same->token(), 1'796'000'000'000'000'042ULL);
  EXPECT_EQ(same->key(), "lock:seat-A1");
  Object* moved = Object::Assign(same, std::string(1000, 'y'));
  EXPECT_NE(moved, same);
  EXPECT_EQ(moved->token(), 1'796'000'000'000'000'042ULL) << "kept when the block moves";
  EXPECT_EQ(moved->key(), "lock:seat-A1");
  EXPECT_EQ(moved->value(), std::string(1000, 'y'));
  Object::Destroy(plain);
  Object::Destroy(same);
  Object::Destroy(moved);
}

TEST(Shard, ClearGivesTheTableBack) {
  Shard s(kT0);
  for (int i = 0; i < 10000; ++i) Put(s, "key:" + std::to_string(i), "v", kT0);
  const std::size_t full = s.buckets();
  EXPECT_GE(full, 10000u);
  EXPECT_LE(full, 10000u * 2) << "grown by half under a 0.9 load factor, not doubled at 0.5";
  s.Clear();
  EXPECT_EQ(s.size(), 0u);
  EXPECT_LT(s.buckets(), 64u) << "FLUSHALL frees the buckets, not only the keys";
  Put(s, "again", "v", kT0);
  EXPECT_NE(Get(s, "again", kT0), nullptr);
}

TEST(Shard, LazyExpiryHidesAKeyAtItsDeadline) {
  Shard s(kT0);
  Put(s, "k", "v", kT0, kT0 + 100);
  EXPECT_NE(Get(s, "k", kT0 + 99), nullptr);
  EXPECT_EQ(Get(s, "k", kT0 + 100), nullptr) << "visible at its deadline";
  EXPECT_EQ(s.size(), 0u) << "the lookup reclaimed it";
  EXPECT_EQ(s.expires(), 0u);
  EXPECT_EQ(s.expired_total(), 1u);
}

TEST(Shard, SetClearsTtlUnlessKept) {
  Shard s(kT0);
  Object* o = Put(s, "k", "v", kT0, kT0 + 100);
  o = s.Set(o, "k", "w", /*keep_ttl=*/true);
  EXPECT_EQ(o->expire_at(), kT0 + 100);
  // Growing the value moves the block: the TTL must move with it.
  o = s.Set(o, "k", std::string(500, 'z'), /*keep_ttl=*/true);
  EXPECT_EQ(o->expire_at(), kT0 + 100);
  EXPECT_EQ(s.expires(), 1u);
  EXPECT_EQ(s.ExpireDue(kT0 + 100, 10), 1u) << "the moved block is on the wheel";
  EXPECT_EQ(s.size(), 0u);

  o = Put(s, "k", "v", kT0, kT0 + 100);
  o = s.Set(o, "k", "w", /*keep_ttl=*/false);
  EXPECT_FALSE(o->has_expire());
  EXPECT_EQ(s.expires(), 0u);
  EXPECT_EQ(s.ExpireDue(kT0 + 1000, 10), 0u);
  EXPECT_NE(Get(s, "k", kT0 + 1000), nullptr);
}

TEST(Shard, ActiveExpiryIsBoundedPerCall) {
  Shard s(kT0);
  for (int i = 0; i < 2500; ++i) Put(s, "k" + std::to_string(i), "v", kT0, kT0 + 1 + i % 50);
  Put(s, "forever", "v", kT0);
  EXPECT_EQ(s.ExpireDue(kT0, 1000), 0u) << "nothing is due yet";
  EXPECT_EQ(s.ExpireDue(kT0 + 50, 1000), 1000u);
  EXPECT_EQ(s.ExpireDue(kT0 + 50, 1000), 1000u);
  EXPECT_EQ(s.ExpireDue(kT0 + 50, 1000), 500u);
  EXPECT_EQ(s.size(), 1u);
  EXPECT_EQ(s.expired_total(), 2500u);
}

TEST(Shard, ExpiryFollowsDeadlinesExactlyUnderRandomOperations) {
  // A model (map of key -> deadline) against the shard, with random sets, TTL changes,
  // deletes and time steps; every key's visibility must match the model at every step.
  Shard s(kT0);
  std::map<std::string, std::int64_t> model;  // 0 = no deadline
  std::mt19937 rng(42);
  std::int64_t now = kT0;
  for (int step = 0; step < 20000; ++step) {
    std::string key = "k" + std::to_string(rng() % 64);
    switch (rng() % 5) {
      case 0:
      case 1: {
        std::int64_t d = rng() % 3 ? now + 1 + static_cast<std::int64_t>(rng() % 200) : 0;
        Put(s, key, "v" + std::to_string(step), now, d);
        model[key] = d;
        break;
      }
      case 2:
        if (Object* o = Get(s, key, now)) {
          s.Erase(o);
          model.erase(key);
        }
        break;
      case 3:
        now += static_cast<std::int64_t>(rng() % 50);
        if (rng() % 2) s.ExpireDue(now, 7);
        break;
      case 4:
        if (Object* o = Get(s, key, now)) {
          std::int64_t d = now + 1 + static_cast<std::int64_t>(rng() % 100);
          s.SetDeadline(o, d);
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
    ASSERT_EQ(Get(s, probe, now) != nullptr, model.count(probe) == 1)
        << "step " << step << " key " << probe;
  }
}

TEST(Keyspace, ShardsAreContiguousRangesOfTheHash) {
  Keyspace ks(16, kT0);
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
  EXPECT_THROW(Keyspace(12, kT0), std::invalid_argument);
  Keyspace one(1, kT0);
  EXPECT_EQ(one.ShardIndex(~0ull), 0);
}

}  // namespace
}  // namespace latch::store
