#include "store/timer_wheel.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <vector>

namespace latch::store {
namespace {

// Nodes here live anywhere (stack, vectors): PointerSpace gives them handles. The store's
// wheel runs on slab handles (store_test.cpp covers it through the shard).
using TimerWheel = BasicTimerWheel<PointerSpace>;

constexpr std::int64_t kStart = 1'000'003;  // not aligned on any level boundary
constexpr std::size_t kAll = std::numeric_limits<std::size_t>::max();
constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

struct Timer : TimerNode {
  int id = 0;
};

// Advances and returns the fired timers, checking the wheel's contract on each one.
std::vector<Timer*> Fire(TimerWheel& w, std::int64_t now, std::size_t budget = kAll) {
  std::vector<Timer*> fired;
  w.Advance(now, budget, [&](TimerNode* n) {
    EXPECT_FALSE(n->scheduled()) << "fired node still linked";
    EXPECT_LE(n->deadline, now) << "fired early";
    fired.push_back(static_cast<Timer*>(n));
  });
  return fired;
}

// Checks that a node due at `deadline` fires at exactly that time, not 1 ms before.
void ExpectFiresExactlyAt(std::int64_t start, std::int64_t deadline) {
  TimerWheel w(start);
  Timer t;
  w.Schedule(&t, deadline);
  ASSERT_TRUE(Fire(w, deadline - 1).empty()) << "start " << start << " deadline " << deadline;
  EXPECT_TRUE(t.scheduled());
  const auto fired = Fire(w, deadline);
  ASSERT_EQ(fired.size(), 1u) << "start " << start << " deadline " << deadline;
  EXPECT_EQ(fired[0], &t);
  EXPECT_EQ(w.size(), 0u);
}

TEST(TimerWheelTest, EmptyWheelMovesTime) {
  TimerWheel w(kStart);
  EXPECT_EQ(w.size(), 0u);
  EXPECT_EQ(w.now(), kStart);
  EXPECT_TRUE(Fire(w, kStart + 86'400'000).empty());
  EXPECT_EQ(w.now(), kStart + 86'400'000);
  // Time never goes back.
  EXPECT_TRUE(Fire(w, kStart).empty());
  EXPECT_EQ(w.now(), kStart + 86'400'000);
}

TEST(TimerWheelTest, FreshNodeIsNotScheduled) {
  Timer t;
  EXPECT_FALSE(t.scheduled());
  TimerWheel w(kStart);
  w.Schedule(&t, kStart + 10);
  EXPECT_TRUE(t.scheduled());
  w.Cancel(&t);
  EXPECT_FALSE(t.scheduled());
}

TEST(TimerWheelTest, FiresInDeadlineOrder) {
  TimerWheel w(kStart);
  const std::vector<std::int64_t> offsets = {500, 1, 70'000, 64, 63, 4096, 65, 3, 1'000'000, 2};
  std::vector<Timer> timers(offsets.size());
  for (std::size_t i = 0; i < offsets.size(); ++i) {
    timers[i].id = static_cast<int>(i);
    w.Schedule(&timers[i], kStart + offsets[i]);
  }
  EXPECT_EQ(w.size(), offsets.size());
  const auto fired = Fire(w, kStart + 2'000'000);
  ASSERT_EQ(fired.size(), offsets.size());
  EXPECT_TRUE(std::is_sorted(fired.begin(), fired.end(),
                             [](Timer* a, Timer* b) { return a->deadline < b->deadline; }));
  EXPECT_EQ(w.size(), 0u);
}

TEST(TimerWheelTest, SameDeadlineFiresInScheduleOrder) {
  TimerWheel w(kStart);
  std::vector<Timer> timers(5);
  for (int i = 0; i < 5; ++i) {
    timers[i].id = i;
    w.Schedule(&timers[i], kStart + 300);
  }
  const auto fired = Fire(w, kStart + 300);
  ASSERT_EQ(fired.size(), 5u);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(fired[i]->id, i);
}

TEST(TimerWheelTest, FiresAtExactDeadlineStepByStep) {
  // Walks time 1 ms at a time over 5000 ms with a timer at every ms of it.
  TimerWheel w(kStart);
  std::vector<Timer> timers(5000);
  for (int i = 0; i < 5000; ++i) w.Schedule(&timers[i], kStart + 1 + i);
  for (int i = 0; i < 5000; ++i) {
    const auto fired = Fire(w, kStart + 1 + i);
    ASSERT_EQ(fired.size(), 1u) << "at +" << i + 1;
    EXPECT_EQ(fired[0], &timers[i]);
  }
  EXPECT_EQ(w.size(), 0u);
}

TEST(TimerWheelTest, CascadesAcrossEveryLevelBoundary) {
  for (int level = 1; level < TimerWheel::kLevels; ++level) {
    const int shift = level * TimerWheel::kSlotBits;
    if (shift >= 63) break;
    const std::int64_t span = std::int64_t{1} << shift;
    // Unaligned and aligned starts; deadlines on, just before and just after the boundary.
    for (std::int64_t start : {kStart, std::int64_t{0}, span - 1, span * 3 / 2}) {
      const std::int64_t boundary = (start / span + 1) * span;
      for (std::int64_t d : {boundary - 1, boundary, boundary + 1}) {
        if (d <= start || d > kMax - 1) continue;
        ExpectFiresExactlyAt(start, d);
      }
    }
  }
}

TEST(TimerWheelTest, CascadeThroughIntermediateSteps) {
  // Moves time in uneven steps across several boundaries; nothing fires before its deadline.
  TimerWheel w(kStart);
  std::vector<Timer> timers(8);
  const std::int64_t deadlines[] = {kStart + 64,         kStart + 4095,      kStart + 4096,
                                    kStart + 262'144,    kStart + 262'145,   kStart + 300'000,
                                    kStart + 16'777'216, kStart + 16'777'217};
  for (int i = 0; i < 8; ++i) w.Schedule(&timers[i], deadlines[i]);
  std::size_t total = 0;
  for (std::int64_t t = kStart; t <= kStart + 17'000'000; t += 997) {
    for (Timer* f : Fire(w, t)) {
      EXPECT_GT(f->deadline, t - 997) << "fired late";
      ++total;
    }
  }
  EXPECT_EQ(total, 8u);
}

TEST(TimerWheelTest, LongHorizonsAreKept) {
  constexpr std::int64_t kYear = 365LL * 24 * 3600 * 1000;
  for (std::int64_t d : {kStart + kYear, kStart + 100 * kYear, kMax / 2, kMax - 1, kMax}) {
    TimerWheel w(kStart);
    Timer t;
    Timer soon;
    w.Schedule(&t, d);
    w.Schedule(&soon, kStart + 10);
    // Intermediate stops, including one jump of days after idling.
    ASSERT_EQ(Fire(w, kStart + 10).size(), 1u);
    EXPECT_TRUE(Fire(w, kStart + 86'400'000LL * 30).empty());
    EXPECT_TRUE(Fire(w, kStart + (d - kStart) / 2).empty());
    EXPECT_TRUE(Fire(w, d - 1).empty());
    EXPECT_TRUE(t.scheduled());
    EXPECT_EQ(w.size(), 1u);
    const auto fired = Fire(w, d);
    ASSERT_EQ(fired.size(), 1u) << d;
    EXPECT_EQ(fired[0], &t);
  }
}

TEST(TimerWheelTest, HugeJumpFiresEverythingAndIsCheap) {
  // One jump from kStart to near INT64_MAX: with O(ms) stepping this would never end.
  TimerWheel w(kStart);
  std::vector<Timer> timers(64);
  for (int i = 0; i < 64; ++i) w.Schedule(&timers[i], kStart + (std::int64_t{1} << i % 62));
  EXPECT_EQ(Fire(w, kMax).size(), 64u);
  EXPECT_EQ(w.now(), kMax);
}

TEST(TimerWheelTest, NegativeAndZeroTimesWork) {
  TimerWheel w(-5000);
  Timer a;
  Timer b;
  w.Schedule(&a, -10);
  w.Schedule(&b, 10);
  EXPECT_TRUE(Fire(w, -11).empty());
  ASSERT_EQ(Fire(w, -10).size(), 1u);
  EXPECT_TRUE(Fire(w, 9).empty());
  ASSERT_EQ(Fire(w, 10).size(), 1u);
}

TEST(TimerWheelTest, PastDeadlineFiresOnNextAdvance) {
  TimerWheel w(kStart);
  Timer past;
  Timer now;
  w.Schedule(&past, kStart - 1000);
  w.Schedule(&now, kStart);
  const auto fired = Fire(w, kStart);  // no time passes
  ASSERT_EQ(fired.size(), 2u);
  EXPECT_EQ(fired[0], &past);
  EXPECT_EQ(fired[1], &now);
}

TEST(TimerWheelTest, BoundedTicks) {
  TimerWheel w(kStart);
  std::vector<Timer> timers(10'000);
  std::mt19937_64 rng(7);
  for (auto& t : timers) w.Schedule(&t, kStart + 1 + static_cast<std::int64_t>(rng() % 30'000));
  const std::int64_t later = kStart + 60'000;
  std::int64_t last_deadline = 0;
  for (int call = 0; call < 100; ++call) {
    const auto fired = Fire(w, later, 100);
    ASSERT_EQ(fired.size(), 100u) << "call " << call;
    for (Timer* t : fired) {
      EXPECT_GE(t->deadline, last_deadline);
      last_deadline = t->deadline;
    }
    EXPECT_EQ(w.size(), 10'000u - 100u * (call + 1));
  }
  EXPECT_TRUE(Fire(w, later, 100).empty());
  EXPECT_EQ(w.now(), later);
}

TEST(TimerWheelTest, ZeroBudgetDoesNothing) {
  TimerWheel w(kStart);
  Timer t;
  w.Schedule(&t, kStart + 5);
  EXPECT_EQ(w.Advance(kStart + 10, 0, [](TimerNode*) { ADD_FAILURE(); }), 0u);
  EXPECT_TRUE(t.scheduled());
  EXPECT_EQ(Fire(w, kStart + 10).size(), 1u);
}

TEST(TimerWheelTest, CascadeWorkIsBoundedPerCall) {
  // 2000 nodes in one level-2 slot, at most 10 moves per call. At 8192 they move to level 1
  // (or level 0 for the first 64), then the level-1 ones move to level 0: 3936 moves, so at
  // least 394 calls, where an unbounded cascade would need 2 calls of budget 1000. Nothing
  // fires early and everything fires.
  TimerWheel w(0, 10);
  std::vector<Timer> timers(2000);
  for (int i = 0; i < 2000; ++i) w.Schedule(&timers[i], 8192 + i);
  std::set<Timer*> seen;
  int calls = 0;
  for (; calls < 10'000 && w.size() > 0; ++calls) {
    const auto fired = Fire(w, 20'000, 1000);
    for (Timer* t : fired) EXPECT_TRUE(seen.insert(t).second);
  }
  EXPECT_GE(calls, 394);
  EXPECT_EQ(seen.size(), 2000u);
  EXPECT_EQ(w.size(), 0u);

  TimerWheel unbounded(0);
  for (auto& t : timers) unbounded.Schedule(&t, t.deadline);
  EXPECT_EQ(Fire(unbounded, 20'000, 1000).size(), 1000u);
  EXPECT_EQ(Fire(unbounded, 20'000, 1000).size(), 1000u);
}

TEST(TimerWheelTest, CancelEveryKindOfNode) {
  // From time 0, a deadline of 2^(6L) + 1 sits on level L exactly; -5 is on the due list.
  TimerWheel w(0, 3);
  std::vector<Timer> keep(12);
  std::vector<Timer> drop(12);
  for (int level = 0; level < 11; ++level) {
    const std::int64_t d = (std::int64_t{1} << (level * 6)) + 1;
    w.Schedule(&keep[level], d);
    w.Schedule(&drop[level], d);
  }
  w.Schedule(&keep[11], -5);
  w.Schedule(&drop[11], -5);
  EXPECT_EQ(w.size(), 24u);
  for (auto& t : drop) {
    w.Cancel(&t);
    EXPECT_FALSE(t.scheduled());
  }
  w.Cancel(&drop[0]);  // twice: no-op
  Timer never;
  w.Cancel(&never);  // never scheduled: no-op
  EXPECT_EQ(w.size(), 12u);
  std::set<Timer*> fired;
  for (int call = 0; call < 1000 && w.size() > 0; ++call) {
    for (Timer* t : Fire(w, kMax)) fired.insert(t);
  }
  EXPECT_EQ(fired.size(), 12u);
  for (auto& t : keep) EXPECT_TRUE(fired.count(&t));
}

TEST(TimerWheelTest, CancelOnlyNodeOfSlotThenJump) {
  TimerWheel w(kStart);
  Timer a;
  Timer b;
  w.Schedule(&a, kStart + 100'000);
  w.Schedule(&b, kStart + 200'000);
  w.Cancel(&a);
  EXPECT_TRUE(Fire(w, kStart + 199'999).empty());
  EXPECT_EQ(w.now(), kStart + 199'999);
  EXPECT_EQ(Fire(w, kStart + 200'000).size(), 1u);
}

TEST(TimerWheelTest, CancelNodeInPartlyCascadedSlot) {
  // With 2 moves per call, a 5-node slot is cascaded over several calls; cancelling the
  // nodes still waiting in it must work and they must never fire.
  TimerWheel w(0, 2);
  std::vector<Timer> timers(5);
  for (int i = 0; i < 5; ++i) w.Schedule(&timers[i], 4096 * 3 + 10 + i);
  EXPECT_TRUE(Fire(w, 4096 * 3 + 9).empty());  // cascaded 2 of 5 at most
  for (int i = 2; i < 5; ++i) w.Cancel(&timers[i]);
  EXPECT_EQ(w.size(), 2u);
  std::vector<Timer*> fired;
  for (int call = 0; call < 100 && w.size() > 0; ++call) {
    for (Timer* t : Fire(w, 4096 * 4)) fired.push_back(t);
  }
  ASSERT_EQ(fired.size(), 2u);
  EXPECT_EQ(fired[0], &timers[0]);
  EXPECT_EQ(fired[1], &timers[1]);
}

TEST(TimerWheelTest, CallbackMayRescheduleTheFiredNode) {
  TimerWheel w(kStart);
  Timer t;
  w.Schedule(&t, kStart + 10);
  int fires = 0;
  std::vector<std::int64_t> at;
  for (std::int64_t now = kStart; now <= kStart + 100; ++now) {
    w.Advance(now, kAll, [&](TimerNode* n) {
      ++fires;
      at.push_back(now);
      if (fires < 5) w.Schedule(n, now + 10);
    });
  }
  EXPECT_EQ(at, (std::vector<std::int64_t>{kStart + 10, kStart + 20, kStart + 30, kStart + 40,
                                           kStart + 50}));
  EXPECT_EQ(w.size(), 0u);
}

TEST(TimerWheelTest, CallbackMayRescheduleDueAndCancelOthers) {
  TimerWheel w(kStart);
  Timer a;
  Timer b;
  Timer c;
  Timer late;
  w.Schedule(&a, kStart + 5);
  w.Schedule(&b, kStart + 5);
  w.Schedule(&c, kStart + 6);
  w.Schedule(&late, kStart + 1000);
  std::vector<TimerNode*> fired;
  bool rescheduled = false;
  auto fn = [&](TimerNode* n) {
    fired.push_back(n);
    if (n == &a && !rescheduled) {
      rescheduled = true;
      w.Cancel(&b);                 // already in the due list
      w.Cancel(&late);              // on a higher level
      w.Schedule(n, kStart - 100);  // already due: fires by the next Advance
    }
  };
  w.Advance(kStart + 6, kAll, fn);
  w.Advance(kStart + 6, kAll, fn);
  ASSERT_EQ(fired.size(), 3u);
  EXPECT_EQ(fired[0], &a);
  EXPECT_EQ(std::count(fired.begin(), fired.end(), &a), 2);
  EXPECT_EQ(std::count(fired.begin(), fired.end(), &c), 1);
  EXPECT_EQ(w.size(), 0u);
  EXPECT_TRUE(Fire(w, kStart + 2000).empty());
}

TEST(TimerWheelTest, CallbackMayFreeTheNode) {
  TimerWheel w(kStart);
  std::vector<std::unique_ptr<Timer>> owned;
  for (int i = 0; i < 100; ++i) {
    owned.push_back(std::make_unique<Timer>());
    w.Schedule(owned.back().get(), kStart + 1 + i % 7);
  }
  std::size_t freed = 0;
  w.Advance(kStart + 10, kAll, [&](TimerNode* n) {
    for (auto& p : owned) {
      if (p.get() == n) {
        p.reset();  // ASan catches any later touch of the node by the wheel
        ++freed;
      }
    }
  });
  EXPECT_EQ(freed, 100u);
  EXPECT_EQ(w.size(), 0u);
}

// Differential test: the wheel against a std::multimap of deadlines over random operations
// and time jumps of every size.
void RunDifferential(std::uint64_t seed, std::size_t cascade_limit) {
  constexpr int kNodes = 600;
  constexpr int kOps = 20'000;
  std::mt19937_64 rng(seed);
  std::int64_t now = static_cast<std::int64_t>(rng() % 1'000'000'000);
  TimerWheel w(now, cascade_limit);
  std::vector<Timer> timers(kNodes);
  for (int i = 0; i < kNodes; ++i) timers[i].id = i;
  std::multimap<std::int64_t, int> model;  // deadline -> id
  std::vector<std::multimap<std::int64_t, int>::iterator> where(kNodes, model.end());

  auto random_deadline = [&]() -> std::int64_t {
    switch (rng() % 8) {
      case 0:
        return now - static_cast<std::int64_t>(rng() % 100);  // already due
      case 1:
        return now + static_cast<std::int64_t>(rng() % 64);
      case 2:
        return now + static_cast<std::int64_t>(rng() % 5000);
      case 3:
        return now + static_cast<std::int64_t>(rng() % 300'000);
      case 4:
        return now + static_cast<std::int64_t>(rng() % 100'000'000);
      case 5: {  // just around a level boundary
        const int shift = 6 * static_cast<int>(1 + rng() % 5);
        const std::int64_t span = std::int64_t{1} << shift;
        return (now / span + 1) * span + static_cast<std::int64_t>(rng() % 3) - 1;
      }
      case 6:
        return now + static_cast<std::int64_t>(rng() % (std::int64_t{1} << 45));
      default:
        return kMax - static_cast<std::int64_t>(rng() % 1000);
    }
  };
  auto random_jump = [&]() -> std::int64_t {
    switch (rng() % 6) {
      case 0:
        return 0;
      case 1:
        return static_cast<std::int64_t>(rng() % 3);
      case 2:
        return static_cast<std::int64_t>(rng() % 100);
      case 3:
        return static_cast<std::int64_t>(rng() % 10'000);
      case 4:
        return static_cast<std::int64_t>(rng() % 5'000'000);
      default:
        return static_cast<std::int64_t>(rng() % (std::int64_t{1} << 40));
    }
  };

  for (int op = 0; op < kOps; ++op) {
    const int i = static_cast<int>(rng() % kNodes);
    const auto kind = rng() % 10;
    if (kind < 4) {  // schedule (or re-schedule) node i
      if (timers[i].scheduled()) {
        w.Cancel(&timers[i]);
        model.erase(where[i]);
      }
      const std::int64_t d = random_deadline();
      w.Schedule(&timers[i], d);
      where[i] = model.emplace(d, i);
    } else if (kind < 6) {  // cancel node i
      ASSERT_EQ(timers[i].scheduled(), where[i] != model.end());
      if (where[i] != model.end()) model.erase(where[i]);
      where[i] = model.end();
      w.Cancel(&timers[i]);
    } else {  // advance
      const std::int64_t jump = random_jump();
      if (now > kMax - jump) continue;
      now += jump;
      const std::size_t due =
          static_cast<std::size_t>(std::distance(model.begin(), model.upper_bound(now)));
      const std::size_t budget = rng() % 2 ? kAll : 1 + rng() % 50;
      std::size_t fired = 0;
      w.Advance(now, budget, [&](TimerNode* n) {
        Timer* t = static_cast<Timer*>(n);
        ASSERT_FALSE(t->scheduled());
        ASSERT_NE(where[t->id], model.end()) << "fired a node the model does not hold";
        ASSERT_LE(where[t->id]->first, now) << "fired early";
        ASSERT_EQ(where[t->id]->first, t->deadline);
        model.erase(where[t->id]);
        where[t->id] = model.end();
        ++fired;
      });
      if (cascade_limit == TimerWheel::kDefaultCascadeLimit) {
        ASSERT_EQ(fired, std::min(budget, due)) << "seed " << seed << " op " << op;
      } else {
        ASSERT_LE(fired, std::min(budget, due));
      }
    }
    ASSERT_EQ(w.size(), model.size()) << "seed " << seed << " op " << op;
  }
  // Drain: everything due fires within a bounded number of calls, then nothing is due.
  for (int call = 0; call < 100'000; ++call) {
    if (model.empty() || model.begin()->first > now) break;
    w.Advance(now, 64, [&](TimerNode* n) {
      Timer* t = static_cast<Timer*>(n);
      ASSERT_LE(t->deadline, now);
      model.erase(where[t->id]);
      where[t->id] = model.end();
    });
  }
  EXPECT_TRUE(model.empty() || model.begin()->first > now);
  EXPECT_EQ(w.size(), model.size());
  for (auto& t : timers) w.Cancel(&t);
}

TEST(TimerWheelTest, DifferentialAgainstMultimap) {
  for (std::uint64_t seed : {1u, 2u, 3u, 42u, 1234u}) {
    RunDifferential(seed, TimerWheel::kDefaultCascadeLimit);
    if (HasFatalFailure()) return;
  }
}

TEST(TimerWheelTest, DifferentialWithTinyCascadeLimit) {
  for (std::uint64_t seed : {5u, 6u, 7u}) {
    RunDifferential(seed, 3);
    if (HasFatalFailure()) return;
  }
}

}  // namespace
}  // namespace latch::store
