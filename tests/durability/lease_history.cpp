#include "durability/lease_history.h"

#include <algorithm>
#include <map>

namespace latch::test {

std::int64_t Lease::ValidUntil() const {
  const std::int64_t drift_us = ttl_ms * 10 + 2000;  // 1% of the TTL + 2 ms
  std::int64_t until = sent_us + ttl_ms * 1000 - drift_us;
  if (released_us != 0) until = std::min(until, released_us);
  return until;
}

namespace {

void CheckKey(std::vector<Lease>& leases, HistoryVerdict& v) {
  // Overlaps: sweep by start; every lease that starts before an earlier one ends overlaps it.
  std::vector<const Lease*> usable;
  for (const Lease& l : leases) {
    if (l.ValidUntil() > l.ValidFrom()) usable.push_back(&l);
  }
  std::sort(usable.begin(), usable.end(),
            [](const Lease* a, const Lease* b) { return a->ValidFrom() < b->ValidFrom(); });
  v.leases += usable.size();
  std::vector<const Lease*> open;  // leases that may still be valid at the sweep point
  for (const Lease* l : usable) {
    std::erase_if(open, [&](const Lease* o) { return o->ValidUntil() <= l->ValidFrom(); });
    for (const Lease* o : open) {
      ++v.overlaps;
      if (v.first_overlap.empty()) {
        v.first_overlap =
            "key " + std::to_string(l->key) + ": client " + std::to_string(o->client) + " valid [" +
            std::to_string(o->ValidFrom()) + ", " + std::to_string(o->ValidUntil()) + ") token " +
            std::to_string(o->token) + ", client " + std::to_string(l->client) + " granted at " +
            std::to_string(l->ValidFrom()) + " token " + std::to_string(l->token);
      }
    }
    open.push_back(l);
  }
  // Token order: a grant whose reply came before another's acquire was sent happened first.
  std::sort(leases.begin(), leases.end(),
            [](const Lease& a, const Lease& b) { return a.granted_us < b.granted_us; });
  std::uint64_t max_before = 0;  // highest token among grants known to precede the current one
  std::size_t next = 0;
  std::vector<const Lease*> by_sent;
  for (const Lease& l : leases) by_sent.push_back(&l);
  std::sort(by_sent.begin(), by_sent.end(),
            [](const Lease* a, const Lease* b) { return a->sent_us < b->sent_us; });
  for (const Lease* l : by_sent) {
    while (next < leases.size() && leases[next].granted_us < l->sent_us) {
      max_before = std::max(max_before, leases[next].token);
      ++next;
    }
    if (l->token <= max_before) ++v.token_order;
  }
}

}  // namespace

HistoryVerdict CheckHistory(std::vector<Lease> leases) {
  std::map<int, std::vector<Lease>> by_key;
  for (Lease& l : leases) by_key[l.key].push_back(l);
  HistoryVerdict v;
  for (auto& [key, list] : by_key) CheckKey(list, v);
  return v;
}

bool FencedResource::Write(int key, std::uint64_t token) {
  std::lock_guard lock(mu_);
  std::uint64_t& max = max_[static_cast<std::size_t>(key)];
  if (token < max) {
    ++refused_;
    return false;
  }
  max = token;
  log_.emplace_back(key, token);
  return true;
}

std::size_t FencedResource::accepted() const {
  std::lock_guard lock(mu_);
  return log_.size();
}

std::size_t FencedResource::refused() const {
  std::lock_guard lock(mu_);
  return refused_;
}

std::size_t FencedResource::accepted_below_seen() const {
  std::lock_guard lock(mu_);
  std::vector<std::uint64_t> seen(max_.size(), 0);
  std::size_t bad = 0;
  for (const auto& [key, token] : log_) {
    std::uint64_t& s = seen[static_cast<std::size_t>(key)];
    if (token < s) ++bad;
    s = std::max(s, token);
  }
  return bad;
}

}  // namespace latch::test
