// EntryQueue (cluster/entry_queue.h): the leader's units on their way to the Raft log. An
// entry holds whole units in the order they were placed, never part of one; a reply's record
// counts as committed only once every unit holding a number up to it is settled.
#include "cluster/entry_queue.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace latch::cluster {
namespace {

using Numbers = std::vector<std::uint64_t>;

TEST(EntryQueue, AnEntryHoldsWholeUnitsInPlaceOrderNotAppendOrder) {
  EntryQueue q;
  // Unit A opens first (numbers 1 and 3), B interleaves (2) and is placed first (its thread
  // released a shard first): the log follows placement, not the numbers.
  const std::uint64_t a1 = q.Number(true);
  const std::uint64_t b1 = q.Number(true);
  const std::uint64_t a2 = q.Number(false);
  EXPECT_EQ(a1, 1u);
  EXPECT_EQ(b1, 2u);
  EXPECT_EQ(a2, 3u);
  const std::uint64_t sb = q.Place(b1);
  const std::uint64_t sa = q.Place(a1);
  EXPECT_FALSE(q.ready());  // nothing complete yet
  q.Complete(sa, "A", a2);
  EntryQueue::Entry e;
  // A is complete, but B is before it and is not: nothing may be proposed.
  EXPECT_FALSE(q.ready());
  EXPECT_FALSE(q.Take(1 << 20, &e));
  q.Complete(sb, "B", b1);
  ASSERT_TRUE(q.Take(1 << 20, &e));
  EXPECT_EQ(e.records, "BA");
  EXPECT_EQ(e.settles, (Numbers{b1, a1}));
  EXPECT_EQ(e.upto, a2);
  EXPECT_TRUE(e.effects);
  EXPECT_FALSE(q.queued());
  EXPECT_FALSE(q.Take(1 << 20, &e));
}

TEST(EntryQueue, GroupCommitStopsAtTheSizeBoundButNeverSplitsAUnit) {
  EntryQueue q;
  for (int i = 0; i < 3; ++i) {
    const std::uint64_t n = q.Number(true);
    q.Complete(q.Place(n), std::string(600, static_cast<char>('a' + i)), n);
  }
  EntryQueue::Entry e;
  ASSERT_TRUE(q.Take(1000, &e));  // the first unit alone: two would be 1,200 bytes
  EXPECT_EQ(e.records, std::string(600, 'a'));
  ASSERT_TRUE(q.Take(1200, &e));  // the two others fit together
  EXPECT_EQ(e.records, std::string(600, 'b') + std::string(600, 'c'));
  EXPECT_EQ(e.settles, (Numbers{2, 3}));
  const std::uint64_t big = q.Number(true);
  q.Complete(q.Place(big), std::string(5000, 'z'), big);
  ASSERT_TRUE(q.Take(1000, &e));  // a unit larger than the bound goes alone, whole
  EXPECT_EQ(e.records.size(), 5000u);
}

TEST(EntryQueue, TheWatermarkWaitsForEveryUnitHoldingALowerNumber) {
  EntryQueue q;
  const std::uint64_t a1 = q.Number(true);   // 1: A stays open (another thread)
  const std::uint64_t b1 = q.Number(true);   // 2
  const std::uint64_t b2 = q.Number(false);  // 3
  EXPECT_EQ(q.watermark(), 0u);
  q.Complete(q.Place(b1), "B", b2);
  EntryQueue::Entry e;
  ASSERT_TRUE(q.Take(1 << 20, &e));
  q.Settle(e.settles);  // B committed ...
  // ... but A, opened before it with number 1, is not: a reply waiting for 3 waits on.
  EXPECT_EQ(q.watermark(), 0u);
  const std::uint64_t a2 = q.Number(false);  // 4
  q.Complete(q.Place(a1), "A", a2);
  ASSERT_TRUE(q.Take(1 << 20, &e));
  EXPECT_EQ(e.settles, (Numbers{a1}));
  EXPECT_EQ(q.watermark(), 0u);  // proposed is not committed
  q.Settle(e.settles);
  EXPECT_EQ(q.watermark(), 4u);
  EXPECT_EQ(q.appended(), 4u);
}

TEST(EntryQueue, AReadMarkerRidesOnTheNextEntryOrMakesOneOfItsOwn) {
  EntryQueue q;
  const std::uint64_t m = q.Marker();
  EXPECT_TRUE(q.ready());
  EXPECT_TRUE(q.markers_pending());
  EntryQueue::Entry e;
  ASSERT_TRUE(q.Take(1 << 20, &e));  // a barrier: no records
  EXPECT_TRUE(e.records.empty());
  EXPECT_FALSE(e.effects);
  EXPECT_EQ(e.settles, (Numbers{m}));
  EXPECT_EQ(q.watermark(), m - 1);
  q.Settle(e.settles);
  EXPECT_EQ(q.watermark(), m);

  // With a unit placed but incomplete at the front, the marker is proposed on its own (the
  // read is proven by any entry appended after it); the unit follows once complete.
  const std::uint64_t u = q.Number(true);
  const std::uint64_t slot = q.Place(u);
  const std::uint64_t m2 = q.Marker();
  ASSERT_TRUE(q.Take(1 << 20, &e));
  EXPECT_EQ(e.settles, (Numbers{m2}));
  EXPECT_TRUE(e.records.empty());
  q.Settle(e.settles);
  EXPECT_EQ(q.watermark(), u - 1);  // the marker's reply still waits for the open unit
  q.Complete(slot, "U", u);
  const std::uint64_t m3 = q.Marker();
  ASSERT_TRUE(q.Take(1 << 20, &e));  // the unit and the marker behind it: one entry
  EXPECT_EQ(e.records, "U");
  EXPECT_EQ(e.settles, (Numbers{u, m3}));
  EXPECT_EQ(e.upto, m3);
  q.Settle(e.settles);
  EXPECT_EQ(q.watermark(), m3);
}

}  // namespace
}  // namespace latch::cluster
