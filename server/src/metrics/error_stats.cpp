#include "metrics/error_stats.h"

namespace latch {

std::string_view ErrorStats::CodeOf(std::string_view text) {
  // Redis searches "-CODE ..." for a space in its first 32 bytes: 31 of ours (no '-').
  // A newline counts as the space it becomes on the wire.
  const std::size_t n = std::min<std::size_t>(text.size(), 31);
  for (std::size_t i = 0; i < n; ++i) {
    if (text[i] == ' ' || text[i] == '\r' || text[i] == '\n') return text.substr(0, i);
  }
  return "ERR";
}

void ErrorStats::OnErrorReply(std::string_view text) {
  total_.fetch_add(1);
  const std::string_view code = CodeOf(text);
  std::lock_guard lock(mu_);
  auto it = counts_.find(code);
  if (it != counts_.end()) {
    ++it->second;
  } else if (counts_.size() < kMaxCodes) {
    counts_.emplace(std::string(code), 1);
  }
}

void ErrorStats::ForEach(const std::function<void(std::string_view, std::uint64_t)>& fn) const {
  std::lock_guard lock(mu_);
  for (const auto& [code, count] : counts_) fn(code, count);
}

void ErrorStats::Reset() {
  total_ = 0;
  std::lock_guard lock(mu_);
  counts_.clear();
}

}  // namespace latch
