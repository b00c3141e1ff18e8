// The object header's packed word (store/object.h): the deadline shares its 8 bytes with
// OBJECT IDLETIME's access clock. Deadlines must round-trip exactly over the whole int64
// range (a far one moves into the timer links), the clock must survive deadline changes and
// wrap as documented, and the shard must expire far keys and stamp only on Find.
#include <gtest/gtest.h>

#include <climits>
#include <cstdint>
#include <string>

#include "store/key_ops.h"
#include "store/object.h"
#include "store/shard.h"

namespace latch::store {
namespace {

constexpr std::int64_t kHeaderT0 = 5'000'000;  // monotonic ms the shards start at

// An object built in a local 8-aligned buffer, as the slab would hand one out.
struct HeaderBlock {
  alignas(8) char bytes[64] = {};
  Object* Make(std::uint32_t clock) { return Object::Construct(bytes, "key", "value", 0, clock); }
};

TEST(ObjectHeader, StaysTwentyFourBytes) {
  EXPECT_EQ(sizeof(Object), 24u);
  EXPECT_EQ(Object::BlockSize(11, 22, true), 24u + 8 + 11 + 22);
}

TEST(ObjectHeader, DeadlinesRoundTripAtTheExtremesAndKeepTheClock) {
  const std::int64_t deadlines[] = {1,
                                    2,
                                    kHeaderT0 + 30'000,
                                    4'102'444'800'500,  // PEXPIREAT of year 2100, on a wall clock
                                    Object::kMaxPackedDeadline - 1,
                                    Object::kMaxPackedDeadline,
                                    Object::kMaxPackedDeadline + 1,  // the first far one
                                    std::int64_t{1} << 44,
                                    (std::int64_t{1} << 62) + 0x1'0000'0000,  // low half 0
                                    LLONG_MAX - 1,
                                    LLONG_MAX};
  for (std::uint32_t clock : {0u, 1u, 777u, Object::kClockMask}) {
    for (std::int64_t d : deadlines) {
      HeaderBlock b;
      Object* o = b.Make(clock);
      EXPECT_FALSE(o->has_expire());
      EXPECT_EQ(o->access_clock(), clock);
      o->set_deadline(d);
      EXPECT_EQ(o->expire_at(), d) << "clock " << clock;
      EXPECT_TRUE(o->has_expire());
      EXPECT_EQ(o->far_deadline(), d > Object::kMaxPackedDeadline) << d;
      EXPECT_EQ(o->access_clock(), clock) << d;
      EXPECT_FALSE(o->expired(d - 1)) << d;
      EXPECT_TRUE(o->expired(d)) << d;
      // A touch changes the clock only; the key and value are untouched.
      o->Touch((clock + 3) & Object::kClockMask);
      EXPECT_EQ(o->expire_at(), d);
      EXPECT_EQ(o->access_clock(), (clock + 3) & Object::kClockMask);
      EXPECT_EQ(o->key(), "key");
      EXPECT_EQ(o->value(), "value");
      // Back to no deadline: the links a far deadline used are free again for the wheel.
      o->set_deadline(0);
      EXPECT_FALSE(o->has_expire());
      EXPECT_EQ(o->expire_at(), 0);
      EXPECT_FALSE(o->scheduled());
      EXPECT_EQ(o->access_clock(), (clock + 3) & Object::kClockMask);
    }
  }
}

TEST(ObjectHeader, FarToNearAndBackKeepsBothExact) {
  HeaderBlock b;
  Object* o = b.Make(42);
  o->set_deadline(LLONG_MAX);
  o->set_deadline(kHeaderT0 + 1);
  EXPECT_EQ(o->expire_at(), kHeaderT0 + 1);
  EXPECT_FALSE(o->far_deadline());
  EXPECT_FALSE(o->scheduled());  // the far deadline's bits left the links
  o->set_deadline(Object::kMaxPackedDeadline + 5);
  EXPECT_EQ(o->expire_at(), Object::kMaxPackedDeadline + 5);
  EXPECT_EQ(o->access_clock(), 42u);
}

TEST(ObjectHeader, AlreadyPastDeadlinesStayExpired) {
  HeaderBlock b;
  Object* o = b.Make(0);
  o->set_deadline(-1'000);  // stored as 1: both are in the past for any monotonic now
  EXPECT_TRUE(o->has_expire());
  EXPECT_TRUE(o->expired(1));
}

TEST(ObjectHeader, ClockWrapsEveryTwoToTheTwentySeconds) {
  constexpr std::int64_t kPeriodMs = std::int64_t{1 << 20} * 1000;
  EXPECT_EQ(Object::ClockAt(0), 0u);
  EXPECT_EQ(Object::ClockAt(999), 0u);
  EXPECT_EQ(Object::ClockAt(1000), 1u);
  EXPECT_EQ(Object::ClockAt(kPeriodMs - 1), Object::kClockMask);
  EXPECT_EQ(Object::ClockAt(kPeriodMs), 0u);
  EXPECT_EQ(Object::ClockAt(kPeriodMs + 7'500), 7u);

  HeaderBlock b;
  Object* o = b.Make(Object::kClockMask - 4);  // touched 5 s before a wrap
  EXPECT_EQ(o->IdleSeconds(Object::kClockMask - 4), 0u);
  EXPECT_EQ(o->IdleSeconds(Object::kClockMask), 4u);
  EXPECT_EQ(o->IdleSeconds(0), 5u);  // across the wrap
  EXPECT_EQ(o->IdleSeconds(100), 105u);
  // Idle for a whole period and more reads modulo the period, as documented.
  EXPECT_EQ(o->IdleSeconds(Object::kClockMask - 4 + 3 - (1u << 20)), 3u);
}

TEST(ObjectHeader, TouchSkipsTheStoreWhenTheClockIsUnchanged) {
  HeaderBlock b;
  Object* o = b.Make(9);
  o->set_deadline(kHeaderT0);
  const std::int64_t before = o->deadline;  // the packed word itself
  o->Touch(9);
  EXPECT_EQ(o->deadline, before);
  o->Touch(10);
  EXPECT_NE(o->deadline, before);
  EXPECT_EQ(o->expire_at(), kHeaderT0);
}

// The shard: Find stamps the tick's clock, Peek does not, a new key starts at the current
// reading, and far deadlines expire exactly (off the wheel, on the shard's side set).
Object* PutKey(Shard& s, const std::string& key, std::int64_t now, Expiry expiry) {
  Object* o = s.Find(key, HashKey(key), now);
  return s.Put(o, key, HashKey(key), "v", expiry);
}

TEST(ShardAccessClock, FindTouchesAndPeekDoesNot) {
  Shard s(0, kHeaderT0);
  std::int64_t now = kHeaderT0;
  PutKey(s, "a", now, Expiry::Clear());
  EXPECT_EQ(s.Peek("a", HashKey("a"), now)->IdleSeconds(s.access_clock()), 0u);
  now += 3'000;
  s.TickAccessClock(now);
  EXPECT_EQ(s.Peek("a", HashKey("a"), now)->IdleSeconds(s.access_clock()), 3u);
  EXPECT_EQ(s.Peek("a", HashKey("a"), now)->IdleSeconds(s.access_clock()), 3u);
  EXPECT_EQ(s.Find("a", HashKey("a"), now)->IdleSeconds(s.access_clock()), 0u);
  // A new key is stamped with the current reading.
  now += 2'000;
  s.TickAccessClock(now);
  PutKey(s, "b", now, Expiry::At(now + 60'000));
  EXPECT_EQ(s.Peek("b", HashKey("b"), now)->IdleSeconds(s.access_clock()), 0u);
  EXPECT_EQ(s.Peek("a", HashKey("a"), now)->IdleSeconds(s.access_clock()), 2u);
  EXPECT_EQ(s.Peek("b", HashKey("b"), now)->expire_at(), now + 60'000);
}

TEST(ShardAccessClock, FarDeadlinesExpireExactlyAndLeaveWithTheirKey) {
  Shard s(0, kHeaderT0);
  const std::int64_t far = Object::kMaxPackedDeadline + 1'000;
  PutKey(s, "far", kHeaderT0, Expiry::At(far));
  PutKey(s, "max", kHeaderT0, Expiry::At(LLONG_MAX));
  PutKey(s, "near", kHeaderT0, Expiry::At(kHeaderT0 + 10));
  PutKey(s, "gone", kHeaderT0, Expiry::At(far + 1));
  EXPECT_EQ(s.expires(), 4u);
  s.Erase(s.Find("gone", HashKey("gone"), kHeaderT0), HashKey("gone"));
  EXPECT_EQ(s.expires(), 3u);
  EXPECT_EQ(s.Peek("max", HashKey("max"), kHeaderT0)->expire_at(), LLONG_MAX);

  EXPECT_EQ(s.ExpireDue(kHeaderT0 + 10, 100), 1u);  // "near"
  EXPECT_EQ(s.ExpireDue(far - 1, 100), 0u);
  EXPECT_NE(s.Peek("far", HashKey("far"), far - 1), nullptr);
  EXPECT_EQ(s.ExpireDue(far, 100), 1u);
  EXPECT_EQ(s.size(), 1u);
  EXPECT_EQ(s.expires(), 1u);
  // Lazy expiry of a far key, and a far deadline moved back into the packed range.
  Object* m = s.Peek("max", HashKey("max"), far);
  s.SetDeadline(m, HashKey("max"), far + 5);
  EXPECT_EQ(s.Peek("max", HashKey("max"), far + 4)->expire_at(), far + 5);
  EXPECT_EQ(s.Peek("max", HashKey("max"), far + 5), nullptr);
  EXPECT_EQ(s.size(), 0u);
  EXPECT_EQ(s.expires(), 0u);

  // A packed deadline moved out to a far one, and a rewrite into a bigger block keeps it.
  Object* k = PutKey(s, "k", far, Expiry::At(far + 100));
  s.SetDeadline(k, HashKey("k"), LLONG_MAX - 7);
  k = s.Put(s.Find("k", HashKey("k"), far), "k", HashKey("k"), std::string(500, 'x'),
            Expiry::Keep());
  EXPECT_EQ(k->expire_at(), LLONG_MAX - 7);
  EXPECT_EQ(s.ExpireDue(far + 100, 100), 0u);  // it left the wheel with its old deadline
  EXPECT_EQ(s.ExpireDue(LLONG_MAX - 7, 100), 1u);
  EXPECT_EQ(s.expires(), 0u);
}

// A compare-and-delete looks its key up without touching it and touches only a key it
// keeps: a refused release is an access (Redis's script GET), a done one leaves no key.
TEST(ShardAccessClock, CompareAndDeleteTouchesOnlyAKeyItKeeps) {
  Shard s(0, kHeaderT0);
  std::int64_t now = kHeaderT0;
  PutKey(s, "lk", now, Expiry::At(now + 600'000));
  now += 4'000;
  s.TickAccessClock(now);
  const KeyRef k{"lk", HashKey("lk"), &s};
  const OpEnv env{TimeSnapshot{now, now, now * 1000}};
  EXPECT_EQ(s.Peek("lk", k.hash, now)->IdleSeconds(s.access_clock()), 4u);
  EXPECT_EQ(OpDelIf(k, ValueCond::kIfEq, "someone else", env), OpStatus::kNotMet);
  EXPECT_EQ(s.Peek("lk", k.hash, now)->IdleSeconds(s.access_clock()), 0u);
  s.TickAccessClock(now + 2'000);
  EXPECT_EQ(OpDelIf(k, ValueCond::kIfDeq, "not-a-digest", env), OpStatus::kBadDigest);
  EXPECT_EQ(s.Peek("lk", k.hash, now)->IdleSeconds(s.access_clock()), 0u);
  EXPECT_EQ(OpDelIf(k, ValueCond::kIfEq, "v", env), OpStatus::kOk);  // PutKey's value
  EXPECT_EQ(s.Peek("lk", k.hash, now), nullptr);
  EXPECT_EQ(OpDelIf(k, ValueCond::kIfEq, "v", env), OpStatus::kNoKey);
}

}  // namespace
}  // namespace latch::store
