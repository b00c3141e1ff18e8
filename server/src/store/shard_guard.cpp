#include "store/shard_guard.h"

#include <chrono>
#include <vector>

namespace latch::store {
namespace detail {
thread_local constinit const Shard* t_held[kFixedHeld] = {};
thread_local constinit LockPhases* t_lock_phases = nullptr;
thread_local constinit int t_held_count = 0;
}  // namespace detail

namespace {
thread_local std::vector<const Shard*> t_more;  // index kFixedHeld + i

// How often a waiting client looks at the busy flag: short enough that BUSY follows the
// threshold closely, long enough that a waiter costs nothing measurable.
constexpr auto kWaitSlice = std::chrono::milliseconds(2);
}  // namespace

namespace detail {
bool ThisThreadHoldsHigh(const Shard& s) {
  const auto i = static_cast<std::size_t>(s.index()) - kFixedHeld;
  return i < t_more.size() && t_more[i] == &s;
}

void NoteHeldHigh(const Shard& s) {
  const auto i = static_cast<std::size_t>(s.index()) - kFixedHeld;
  if (i >= t_more.size()) t_more.resize(i + 1, nullptr);
  t_more[i] = &s;
}

bool NoteReleasedHigh(const Shard& s) {
  const auto i = static_cast<std::size_t>(s.index()) - kFixedHeld;
  if (i >= t_more.size() || t_more[i] != &s) return false;
  t_more[i] = nullptr;
  return true;
}

bool LockShardContended(Shard& s, const std::atomic<bool>* give_up) {
  if (!LockTimed(s.mu(), give_up)) return false;
  NoteHeld(s);
  return true;
}
}  // namespace detail

bool LockTimed(std::timed_mutex& mu, const std::atomic<bool>* give_up) {
  if (give_up == nullptr) {
    mu.lock();
    return true;
  }
  if (mu.try_lock()) return true;
  // A deadline on the system clock, not try_lock_for's steady one: libstdc++ implements the
  // steady wait with pthread_mutex_clocklock, which GCC 12's ThreadSanitizer does not
  // intercept (it then reports every unlock as one of an unlocked mutex, and every access
  // the lock protects as a race); the system-clock wait is pthread_mutex_timedlock, which it
  // sees. A wall-clock step during a wait only lengthens or shortens that 2 ms slice.
  while (!mu.try_lock_until(std::chrono::system_clock::now() + kWaitSlice)) {
    if (give_up->load(std::memory_order_relaxed)) return false;
  }
  return true;
}

}  // namespace latch::store
