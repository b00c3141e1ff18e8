#include "store/lock_table.h"

#include <algorithm>

namespace latch::store {

std::uint64_t FencingTokens::Next(std::int64_t wall_us) {
  const std::uint64_t floor = wall_us > 0 ? static_cast<std::uint64_t>(wall_us) * 1000 : 0;
  std::uint64_t last = last_.load(std::memory_order_relaxed);
  std::uint64_t next;
  do {
    next = std::max(last + 1, floor);
  } while (!last_.compare_exchange_weak(last, next, std::memory_order_relaxed));
  return next;
}

void FencingTokens::AtLeast(std::uint64_t token) {
  std::uint64_t last = last_.load(std::memory_order_relaxed);
  while (last < token && !last_.compare_exchange_weak(last, token, std::memory_order_relaxed)) {
  }
}

LockTable::LockTable(Shard& shard, const Clock& clock, FencingTokens& tokens, LockStats& stats)
    : shard_(shard), clock_(clock), tokens_(tokens), stats_(stats) {
  shard_.set_expired_lock_counter(&stats_.expired_while_held);
}

LockTable::~LockTable() {
  shard_.set_expired_lock_counter(nullptr);
  if (!entries_.empty()) shard_.set_watcher(nullptr);
  for (auto& [key, queue] : entries_) {
    stats_.waiters.fetch_sub(static_cast<std::int64_t>(queue.size()));
  }
}

LockTable::Queue& LockTable::Track(std::string_view key, std::uint64_t hash) {
  auto it = entries_.find(key, hash);
  if (it == entries_.end()) {
    if (entries_.empty()) shard_.set_watcher(this);
    it = entries_.emplace(std::string(key), Queue{}).first;
  }
  return it.value();
}

void LockTable::Untrack(Map::iterator it) {
  entries_.erase(it);
  if (entries_.empty()) shard_.set_watcher(nullptr);
}

Object* LockTable::GrantNext(std::string_view key, Queue& queue) {
  // Bounded by the queue's length: each turn pops one waiter.
  while (!queue.empty()) {
    LockWaiter w = std::move(queue.front());
    queue.pop_front();
    stats_.waiters.fetch_sub(1, std::memory_order_relaxed);
    TimeSnapshot now = clock_.Now();
    std::uint64_t token = tokens_.Next(now.wall_us);
    if (!w.grant(token)) continue;  // timed out or gone: the token is simply skipped
    Object* o = shard_.CreateLock(key, w.owner, token);
    shard_.SetDeadline(o, now.mono_ms + w.ttl_ms);
    stats_.grants.fetch_add(1, std::memory_order_relaxed);
    stats_.handoffs.fetch_add(1, std::memory_order_relaxed);
    return o;
  }
  return nullptr;
}

std::uint64_t LockTable::TryAcquire(std::string_view key, std::uint64_t hash,
                                    std::string_view owner, std::int64_t ttl_ms,
                                    const TimeSnapshot& now) {
  if (shard_.Find(key, hash, now.mono_ms) != nullptr) {
    stats_.contended.fetch_add(1, std::memory_order_relaxed);
    return 0;
  }
  // Every removal hands the key to the queue, so an absent key has nobody waiting; if a
  // queue were left over anyway, its head goes first: a newcomer never jumps the queue.
  if (auto it = entries_.find(key, hash); it != entries_.end()) {
    Object* granted = GrantNext(key, it.value());
    if (it->second.empty()) Untrack(it);
    if (granted != nullptr) {
      stats_.contended.fetch_add(1, std::memory_order_relaxed);
      return 0;
    }
  }
  std::uint64_t token = tokens_.Next(now.wall_us);
  Object* o = shard_.CreateLock(key, owner, token);
  shard_.SetDeadline(o, now.mono_ms + ttl_ms);
  stats_.grants.fetch_add(1, std::memory_order_relaxed);
  return token;
}

std::uint64_t LockTable::Enqueue(std::string_view key, std::uint64_t hash, LockWaiter waiter) {
  waiter.id = next_waiter_id_++;
  std::uint64_t id = waiter.id;
  Track(key, hash).push_back(std::move(waiter));
  stats_.waiters.fetch_add(1, std::memory_order_relaxed);
  return id;
}

void LockTable::RemoveWaiter(std::string_view key, std::uint64_t hash, std::uint64_t id) {
  auto it = entries_.find(key, hash);
  if (it == entries_.end()) return;
  Queue& queue = it.value();
  auto w = std::find_if(queue.begin(), queue.end(),
                        [id](const LockWaiter& x) { return x.id == id; });
  if (w == queue.end()) return;
  queue.erase(w);
  stats_.waiters.fetch_sub(1, std::memory_order_relaxed);
  if (queue.empty()) Untrack(it);
}

int LockTable::Release(std::string_view key, std::uint64_t hash, std::string_view owner,
                       const TimeSnapshot& now) {
  Object* o = shard_.Find(key, hash, now.mono_ms);
  if (o == nullptr) return -1;
  if (o->value() != owner) {
    stats_.non_owner_releases.fetch_add(1, std::memory_order_relaxed);
    return 0;
  }
  shard_.Erase(o);  // through OnKeyGone when tracked: hands the key to the next waiter
  return 1;
}

int LockTable::Extend(std::string_view key, std::uint64_t hash, std::string_view owner,
                      std::int64_t ttl_ms, const TimeSnapshot& now) {
  Object* o = shard_.Find(key, hash, now.mono_ms);
  if (o == nullptr) return -1;
  if (o->value() != owner) return 0;
  shard_.SetDeadline(o, now.mono_ms + ttl_ms);
  return 1;
}

std::optional<LockInfo> LockTable::Info(std::string_view key, std::uint64_t hash,
                                        const TimeSnapshot& now) {
  Object* o = shard_.Find(key, hash, now.mono_ms);
  if (o == nullptr) return std::nullopt;
  LockInfo info;
  info.owner = std::string(o->value());
  info.ttl_ms = o->has_expire() ? o->expire_at() - now.mono_ms : -1;
  if (std::uint64_t token = o->token(); token != 0) info.token = token;
  if (auto it = entries_.find(key, hash); it != entries_.end()) info.waiters = it->second.size();
  return info;
}

Object* LockTable::OnKeyGone(Shard& /*shard*/, std::string_view key, std::uint64_t hash,
                             Reason /*reason*/) {
  auto it = entries_.find(key, hash);
  if (it == entries_.end()) return nullptr;
  Object* granted = GrantNext(key, it.value());
  if (it->second.empty()) Untrack(it);  // only keys with parked waiters are tracked
  return granted;
}

void LockTable::OnCleared(Shard& /*shard*/) {
  // GrantNext only adds keys to the shard; entries_ does not change shape in this loop.
  std::vector<std::string> idle;
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    GrantNext(it->first, it.value());
    if (it->second.empty()) idle.push_back(it->first);
  }
  for (const auto& k : idle) {
    auto it = entries_.find(k);
    if (it != entries_.end()) Untrack(it);
  }
}

LockTables::LockTables(Keyspace& keyspace, const Clock& clock) : keyspace_(keyspace) {
  tables_.reserve(static_cast<std::size_t>(keyspace.shard_count()));
  for (int i = 0; i < keyspace.shard_count(); ++i) {
    tables_.push_back(std::make_unique<LockTable>(keyspace.shard(i), clock, tokens_, stats_));
  }
}

}  // namespace latch::store
