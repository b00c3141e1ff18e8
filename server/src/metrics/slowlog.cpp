#include "metrics/slowlog.h"

#include <algorithm>

namespace latch {

void Slowlog::Push(SlowlogEntry entry, std::size_t max_len) {
  std::lock_guard lock(mu_);
  entry.id = next_id_++;
  entries_.push_front(std::move(entry));
  while (entries_.size() > max_len) entries_.pop_back();
}

std::vector<SlowlogEntry> Slowlog::Newest(std::size_t count) const {
  std::lock_guard lock(mu_);
  const std::size_t n = std::min(count, entries_.size());
  return std::vector<SlowlogEntry>(entries_.begin(),
                                   entries_.begin() + static_cast<std::ptrdiff_t>(n));
}

std::size_t Slowlog::size() const {
  std::lock_guard lock(mu_);
  return entries_.size();
}

void Slowlog::Reset() {
  std::lock_guard lock(mu_);
  entries_.clear();
}

}  // namespace latch
