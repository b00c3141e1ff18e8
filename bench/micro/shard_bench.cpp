// Micro-benchmarks of one store::Shard with lock-shaped keys ("lock:<12 digits>", 22-byte
// owner tokens, 30 s deadlines): the shard-primitive cost of an acquire (Find miss + Put with
// its deadline), a lookup, and a release (Find + Erase), without sockets, parsing or key
// events (no hook installed). The
// shard's mutex is held around each operation, as the command handlers do.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "store/shard.h"

namespace {

using latch::store::HashKey;
using latch::store::Object;
using latch::store::Shard;

constexpr std::int64_t kNow = 1'000'000;
constexpr std::string_view kToken = "owner-0000000000000042";

std::vector<std::string> LockKeys(std::size_t n) {
  std::vector<std::string> keys(n);
  char buf[32];
  for (std::size_t i = 0; i < n; ++i) {
    std::snprintf(buf, sizeof buf, "lock:%012zu", i * 7919 % 1'000'003);
    keys[i] = buf;
  }
  return keys;
}

void Acquire(Shard& shard, const std::string& key, std::int64_t now) {
  std::lock_guard lock(shard.mu());
  const std::uint64_t h = HashKey(key);
  Object* o = shard.Find(key, h, now);
  if (o != nullptr) return;  // held: SET NX refuses
  shard.Put(nullptr, key, h, kToken, latch::store::Expiry::At(now + 30'000));
}

void Release(Shard& shard, const std::string& key, std::int64_t now) {
  std::lock_guard lock(shard.mu());
  const std::uint64_t h = HashKey(key);
  Object* o = shard.Find(key, h, now);
  if (o != nullptr && o->value() == kToken) shard.Erase(o, h);
}

// Acquire then release `n` distinct keys: the full lifetime of a lock in the store, on a
// shard that holds `n` keys at its peak. Time per acquire+release pair.
void BM_AcquireRelease(benchmark::State& state) {
  const auto keys = LockKeys(static_cast<std::size_t>(state.range(0)));
  Shard shard(0, kNow);
  for (auto _ : state) {
    for (const auto& k : keys) Acquire(shard, k, kNow);
    for (const auto& k : keys) Release(shard, k, kNow);
  }
  if (shard.size() != 0) state.SkipWithError("keys left in the shard");
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(keys.size()));
}
BENCHMARK(BM_AcquireRelease)->Arg(1'000)->Arg(100'000);

// Lookups of held keys (a refused SET NX, GET, the first half of a release) in a shard of n.
void BM_FindHit(benchmark::State& state) {
  const auto keys = LockKeys(static_cast<std::size_t>(state.range(0)));
  Shard shard(0, kNow);
  for (const auto& k : keys) Acquire(shard, k, kNow);
  std::size_t found = 0;
  for (auto _ : state) {
    for (const auto& k : keys) {
      std::lock_guard lock(shard.mu());
      found += shard.Find(k, HashKey(k), kNow) != nullptr;
    }
  }
  if (found != keys.size() * state.iterations()) state.SkipWithError("a key was not found");
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(keys.size()));
}
BENCHMARK(BM_FindHit)->Arg(1'000)->Arg(100'000);

// Reclaiming n keys whose deadlines passed, in bounded ExpireDue batches of 1000 (the
// server's active expiry). Time per reclaimed key.
void BM_ExpireDue(benchmark::State& state) {
  const auto keys = LockKeys(static_cast<std::size_t>(state.range(0)));
  std::int64_t now = kNow;
  std::size_t reclaimed = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto shard = std::make_unique<Shard>(0, now);
    for (const auto& k : keys) Acquire(*shard, k, now);
    now += 30'001;
    state.ResumeTiming();
    // Bounded: a call may stop early at a wheel cascade, so allow 100 calls per 1000 keys.
    for (std::size_t batch = 0; batch <= 100 * (keys.size() / 1000 + 1) && shard->size() > 0;
         ++batch) {
      std::lock_guard lock(shard->mu());
      reclaimed += shard->ExpireDue(now, 1000);
    }
    if (shard->size() != 0) state.SkipWithError("keys left after ExpireDue");
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(reclaimed));
}
BENCHMARK(BM_ExpireDue)->Arg(100'000)->Unit(benchmark::kMillisecond);

}  // namespace
