// Micro-benchmarks of the TTL timer wheel, in the two shapes the lock server produces:
// - InsertCancel: lock TTLs (1-30 s) that are mostly released, i.e. cancelled, before
//   they fire. Reports time per Schedule+Cancel pair.
// - Expire: 1M keys due within 2 s, the wheel advanced in 10 ms ticks. Reports time per
//   fired node, cascades included.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "store/timer_wheel.h"

namespace {

using latch::store::TimerNode;

// Nodes in one array, handle = index: the same arithmetic the store's slab does, without
// its page table.
struct ArraySpace : latch::store::PlainDeadlines {
  TimerNode* base = nullptr;
  TimerNode* Node(std::uint32_t h) const { return base + (h - latch::store::kFirstSpaceHandle); }
  std::uint32_t HandleOf(const TimerNode* n) const {
    return latch::store::kFirstSpaceHandle + static_cast<std::uint32_t>(n - base);
  }
};
using TimerWheel = latch::store::BasicTimerWheel<ArraySpace>;

constexpr std::int64_t kStart = 1'000'003;
constexpr std::size_t kAll = ~std::size_t{0};

// Schedules N nodes with random 1-30 s TTLs, cancels 90% of them (in random order), then
// clears the rest. Time is spread over N Schedule + N Cancel calls.
void BM_InsertCancel(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  std::vector<TimerNode> nodes(n);
  std::vector<std::int64_t> ttl(n);
  std::vector<std::size_t> order(n);
  std::mt19937_64 rng(1);
  for (std::size_t i = 0; i < n; ++i) {
    ttl[i] = 1000 + static_cast<std::int64_t>(rng() % 29'001);
    order[i] = i;
  }
  std::shuffle(order.begin(), order.end(), rng);
  TimerWheel wheel(kStart, TimerWheel::kDefaultCascadeLimit, ArraySpace{{}, nodes.data()});
  std::int64_t now = kStart;
  for (auto _ : state) {
    for (std::size_t i = 0; i < n; ++i) wheel.Schedule(&nodes[i], now + ttl[i]);
    const std::size_t cancelled = n - n / 10;
    for (std::size_t k = 0; k < cancelled; ++k) wheel.Cancel(&nodes[order[k]]);
    for (std::size_t k = cancelled; k < n; ++k) wheel.Cancel(&nodes[order[k]]);
    now += 7;  // the clock moves a little between rounds
    wheel.Advance(now, kAll, [](TimerNode*) {});
    benchmark::DoNotOptimize(wheel.size());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * n));
  // Seconds per Schedule+Cancel pair, printed with an SI suffix ("20n" = 20 ns).
  state.counters["per_op"] =
      benchmark::Counter(static_cast<double>(state.iterations() * n),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_InsertCancel)->Arg(1'000)->Arg(100'000)->Arg(1'000'000);

// Schedules 1M nodes due within 2 s (untimed), then advances in 10 ms steps until all fired.
void BM_Expire(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  std::vector<TimerNode> nodes(n);
  std::vector<std::int64_t> ttl(n);
  std::mt19937_64 rng(2);
  for (std::size_t i = 0; i < n; ++i) ttl[i] = 1 + static_cast<std::int64_t>(rng() % 2000);
  std::int64_t now = kStart;
  std::size_t fired = 0;
  for (auto _ : state) {
    state.PauseTiming();
    TimerWheel wheel(now, TimerWheel::kDefaultCascadeLimit, ArraySpace{{}, nodes.data()});
    for (std::size_t i = 0; i < n; ++i) wheel.Schedule(&nodes[i], now + ttl[i]);
    state.ResumeTiming();
    for (int step = 0; step < 200 && wheel.size() > 0; ++step) {
      now += 10;
      fired += wheel.Advance(now, kAll, [](TimerNode* t) { benchmark::DoNotOptimize(t); });
    }
    if (wheel.size() != 0) state.SkipWithError("nodes left on the wheel");
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(fired));
  // Seconds per fired node (cascades included), printed with an SI suffix.
  state.counters["per_op"] = benchmark::Counter(
      static_cast<double>(fired), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_Expire)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

}  // namespace
