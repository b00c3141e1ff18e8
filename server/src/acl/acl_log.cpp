#include "acl/acl_log.h"

namespace latch::acl {

void AclLog::Add(LogEntry e, std::int64_t now_ms) {
  std::lock_guard lock(mu_);
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->reason == e.reason && it->context == e.context && it->object == e.object &&
        it->username == e.username && now_ms - it->created_ms < 60000) {
      LogEntry again = std::move(*it);
      entries_.erase(it);
      ++again.count;
      again.client_info = std::move(e.client_info);
      entries_.push_front(std::move(again));
      return;
    }
  }
  e.created_ms = now_ms;
  entries_.push_front(std::move(e));
  if (entries_.size() > kMaxLen) entries_.pop_back();
}

std::vector<LogEntry> AclLog::Newest(std::size_t n) const {
  std::lock_guard lock(mu_);
  const std::size_t count = std::min(n, entries_.size());
  return {entries_.begin(), entries_.begin() + static_cast<std::ptrdiff_t>(count)};
}

void AclLog::Reset() {
  std::lock_guard lock(mu_);
  entries_.clear();
}

}  // namespace latch::acl
