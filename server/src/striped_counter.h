#pragma once
// A statistics counter that every worker thread bumps on every command. A single atomic
// would bounce its cache line between cores on each increment; this one keeps one
// cache-line-sized slot per stripe, a thread always adds to its own stripe, and readers (INFO)
// sum the stripes. Same calling shape as std::atomic (fetch_add, load, assignment to reset).
#include <array>
#include <atomic>
#include <cstdint>

namespace latch {

class StripedCounter {
 public:
  static constexpr int kStripes = 16;

  void fetch_add(std::uint64_t v, std::memory_order = std::memory_order_relaxed) {
    slots_[Stripe()].value.fetch_add(v, std::memory_order_relaxed);
  }
  std::uint64_t load() const {
    std::uint64_t sum = 0;
    for (const auto& s : slots_) sum += s.value.load(std::memory_order_relaxed);
    return sum;
  }
  StripedCounter& operator=(std::uint64_t v) {
    for (auto& s : slots_) s.value.store(0, std::memory_order_relaxed);
    slots_[0].value.store(v, std::memory_order_relaxed);
    return *this;
  }

 private:
  static int Stripe();
  struct alignas(64) Slot {
    std::atomic<std::uint64_t> value{0};
  };
  std::array<Slot, kStripes> slots_;
};

}  // namespace latch
