#pragma once
// latch's lock metrics beyond the counters of store::LockStats: Prometheus histograms of
// how long LOCK.ACQUIRE ... WAIT waited (granted or timed out), of the hand-off latency (from
// the end of the previous lease, its release or its deadline, to the waiter's grant) and of
// how long a LOCK.ACQUIRE lock was held (grant to release, delete or expiry, from its fencing
// token, which is the grant's wall-clock nanoseconds); a counter of waits that timed out and
// a gauge of LOCK.ACQUIRE locks held now. Bumped under a shard lock by the lock table and
// the key-event router: relaxed atomics, never reset (Prometheus counters only grow).
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "store/lock_wait_timer.h"

namespace latch {

class Clock;

class LatencyHistogram {
 public:
  static constexpr std::array<double, 13> kBounds = {0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1,
                                                     0.5,    1,      5,     10,    30,   60};
  void Observe(std::int64_t nanos);
  // Appends the exposition of `name` (HELP, TYPE, _bucket{le}, _sum, _count).
  void Append(std::string* out, std::string_view name, std::string_view help) const;

 private:
  std::array<std::atomic<std::uint64_t>, kBounds.size() + 1> buckets_{};  // last: +Inf only
  std::atomic<std::uint64_t> count_{0};
  std::atomic<std::int64_t> sum_nanos_{0};
};

class LockTimings final : public store::LockWaitTimer {
 public:
  explicit LockTimings(int shards) : held_(static_cast<std::size_t>(shards)) {}

  void WaitEnded(std::int64_t nanos, bool timed_out) override {
    wait.Observe(nanos);
    if (timed_out) wait_timeouts.fetch_add(1, kRelaxed);
  }

  LatencyHistogram wait, handoff, hold;
  const Clock* clock = nullptr;  // the server's (injected) clock: how late an expiry was
  std::atomic<std::uint64_t> wait_timeouts{0};

  // LOCK.ACQUIRE keys held, per shard so that a FLUSHALL of a shard can zero its count.
  void Granted(int shard) { held_[static_cast<std::size_t>(shard)].fetch_add(1, kRelaxed); }
  void Gone(int shard) { held_[static_cast<std::size_t>(shard)].fetch_sub(1, kRelaxed); }
  void Cleared(int shard) { held_[static_cast<std::size_t>(shard)].store(0, kRelaxed); }
  std::uint64_t Held() const;

  // The whole lock section of /metrics.
  void Append(std::string* out) const;

 private:
  static constexpr auto kRelaxed = std::memory_order_relaxed;
  struct Held {
    explicit Held(std::size_t n) : n(n), v(new std::atomic<std::int64_t>[n]) {
      for (std::size_t i = 0; i < n; ++i) v[i].store(0);
    }
    std::atomic<std::int64_t>& operator[](std::size_t i) { return v[i]; }
    const std::atomic<std::int64_t>& operator[](std::size_t i) const { return v[i]; }
    std::size_t n;
    std::unique_ptr<std::atomic<std::int64_t>[]> v;
  } held_;
};

}  // namespace latch
