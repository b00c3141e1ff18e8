#include "metrics/lock_timings.h"

#include <cstdio>

namespace latch {
namespace {
std::string Number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  return buf;
}
}  // namespace

void LatencyHistogram::Observe(std::int64_t nanos) {
  if (nanos < 0) nanos = 0;
  const double seconds = static_cast<double>(nanos) / 1e9;
  std::size_t i = 0;
  while (i < kBounds.size() && seconds > kBounds[i]) ++i;
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
  sum_nanos_.fetch_add(nanos, std::memory_order_relaxed);
}

void LatencyHistogram::Append(std::string* out, std::string_view name,
                              std::string_view help) const {
  const std::string n(name);
  out->append("# HELP " + n + " ").append(help).append("\n# TYPE " + n + " histogram\n");
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < kBounds.size(); ++i) {
    cumulative += buckets_[i].load(std::memory_order_relaxed);
    out->append(n + "_bucket{le=\"" + Number(kBounds[i]) + "\"} " + std::to_string(cumulative) +
                "\n");
  }
  cumulative += buckets_.back().load(std::memory_order_relaxed);
  // _count equals the +Inf bucket: both read from the buckets, so a scrape racing an
  // Observe stays consistent.
  out->append(n + "_bucket{le=\"+Inf\"} " + std::to_string(cumulative) + "\n");
  out->append(n + "_sum " +
              Number(static_cast<double>(sum_nanos_.load(std::memory_order_relaxed)) / 1e9) + "\n");
  out->append(n + "_count " + std::to_string(cumulative) + "\n");
}

std::uint64_t LockTimings::Held() const {
  std::int64_t sum = 0;
  for (std::size_t i = 0; i < held_.n; ++i) sum += held_[i].load(kRelaxed);
  return sum < 0 ? 0 : static_cast<std::uint64_t>(sum);
}

void LockTimings::Append(std::string* out) const {
  wait.Append(out, "latch_lock_wait_seconds",
              "Time LOCK.ACQUIRE ... WAIT spent parked, until granted or timed out.");
  handoff.Append(out, "latch_lock_handoff_seconds",
                 "From the end of a lease (release or deadline) to the next waiter's grant.");
  hold.Append(out, "latch_lock_hold_seconds",
              "How long a LOCK.ACQUIRE lock was held: grant to release, delete or expiry.");
  out->append(
      "# HELP latch_lock_wait_timeouts_total LOCK.ACQUIRE ... WAIT calls that timed out.\n"
      "# TYPE latch_lock_wait_timeouts_total counter\nlatch_lock_wait_timeouts_total " +
      std::to_string(wait_timeouts.load(kRelaxed)) + "\n");
  out->append(
      "# HELP latch_locks_held LOCK.ACQUIRE locks held now.\n"
      "# TYPE latch_locks_held gauge\nlatch_locks_held " +
      std::to_string(Held()) + "\n");
}

}  // namespace latch
