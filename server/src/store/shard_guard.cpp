#include "store/shard_guard.h"

#include <chrono>
#include <vector>

namespace latch::store {
namespace {
// Indexed by shard index: the shard this thread holds at that index, or nullptr. The first
// kFixed indexes (every default configuration) live in a plain array, checked on every
// command without a size test or a vector; higher ones grow t_more once per thread.
constexpr std::size_t kFixed = 64;
thread_local const Shard* t_fixed[kFixed];
thread_local std::vector<const Shard*> t_more;  // index kFixed + i

// How often a waiting client looks at the busy flag: short enough that BUSY follows the
// threshold closely, long enough that a waiter costs nothing measurable.
constexpr auto kWaitSlice = std::chrono::milliseconds(2);
}  // namespace

bool ThisThreadHolds(const Shard& s) {
  const auto i = static_cast<std::size_t>(s.index());
  if (i < kFixed) return t_fixed[i] == &s;
  return i - kFixed < t_more.size() && t_more[i - kFixed] == &s;
}

void NoteHeld(const Shard& s) {
  const auto i = static_cast<std::size_t>(s.index());
  if (i < kFixed) {
    t_fixed[i] = &s;
    return;
  }
  if (i - kFixed >= t_more.size()) t_more.resize(i - kFixed + 1, nullptr);
  t_more[i - kFixed] = &s;
}

void NoteReleased(const Shard& s) {
  if (ThisThreadHolds(s)) {
    const auto i = static_cast<std::size_t>(s.index());
    (i < kFixed ? t_fixed[i] : t_more[i - kFixed]) = nullptr;
  }
}

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

bool LockShard(Shard& s, const std::atomic<bool>* give_up) {
  // Uncontended (nearly every command): one try_lock, no clock read, no slices.
  if (!s.mu().try_lock() && !LockTimed(s.mu(), give_up)) return false;
  NoteHeld(s);
  return true;
}

void UnlockShard(Shard& s) {
  NoteReleased(s);
  s.mu().unlock();
}

}  // namespace latch::store
