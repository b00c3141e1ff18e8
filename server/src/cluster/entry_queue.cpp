#include "cluster/entry_queue.h"

#include <algorithm>

namespace latch::cluster {

std::uint64_t EntryQueue::Number(bool opens) {
  const std::uint64_t n = ++appended_;
  if (opens) unsettled_.insert(n);
  return n;
}

std::uint64_t EntryQueue::Marker() {
  const std::uint64_t n = ++appended_;
  unsettled_.insert(n);
  markers_.push_back(n);
  return n;
}

std::uint64_t EntryQueue::Place(std::uint64_t first) {
  slots_.push_back(Slot{first, first, {}, false});
  return front_slot_ + slots_.size() - 1;
}

void EntryQueue::Complete(std::uint64_t slot, std::string records, std::uint64_t last) {
  Slot& s = slots_[slot - front_slot_];
  s.records = std::move(records);
  s.last = last;
  s.complete = true;
}

bool EntryQueue::Take(std::size_t max_bytes, Entry* out) {
  if (!ready()) return false;
  out->records.clear();
  out->settles.clear();
  out->upto = 0;
  while (
      !slots_.empty() && slots_.front().complete &&
      (out->settles.empty() || out->records.size() + slots_.front().records.size() <= max_bytes)) {
    Slot& s = slots_.front();
    out->records += s.records;
    out->settles.push_back(s.first);
    out->upto = std::max(out->upto, s.last);
    slots_.pop_front();
    ++front_slot_;
  }
  out->effects = !out->records.empty();
  for (const std::uint64_t m : markers_) {
    out->settles.push_back(m);
    out->upto = std::max(out->upto, m);
  }
  markers_.clear();
  return true;
}

void EntryQueue::Settle(const std::vector<std::uint64_t>& numbers) {
  for (const std::uint64_t n : numbers) unsettled_.erase(n);
}

std::uint64_t EntryQueue::watermark() const {
  return unsettled_.empty() ? appended_ : *unsettled_.begin() - 1;
}

}  // namespace latch::cluster
