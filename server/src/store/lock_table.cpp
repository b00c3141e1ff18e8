#include "store/lock_table.h"

#include <algorithm>

namespace latch::store {

LockTable::LockTable(Shard& shard, const Clock& clock, FencingTokens& tokens, LockStats& stats)
    : shard_(shard), clock_(clock), tokens_(tokens), stats_(stats) {}

LockTable::~LockTable() {
  for (auto& [key, queue] : entries_) {
    stats_.waiters.fetch_sub(static_cast<std::int64_t>(queue.size()));
  }
}

LockTable::Queue& LockTable::Track(std::string_view key, std::uint64_t hash) {
  auto it = entries_.find(key, hash);
  if (it == entries_.end()) it = entries_.emplace(std::string(key), Queue{}).first;
  return it.value();
}

Object* LockTable::GrantNext(std::string_view key, std::uint64_t hash, Queue& queue) {
  // Bounded by the queue's length: each turn pops one waiter.
  while (!queue.empty()) {
    LockWaiter w = std::move(queue.front());
    queue.pop_front();
    stats_.waiters.fetch_sub(1, std::memory_order_relaxed);
    const TimeSnapshot now = clock_.Now();
    const bool past_deadline = w.deadline_ms != 0 && w.deadline_ms <= now.mono_ms;
    if (stats_.wait_timer) {
      stats_.wait_timer->WaitEnded((now.mono_ms - w.enqueued_ms) * 1'000'000, past_deadline);
    }
    if (past_deadline) {
      // Its deadline passed while the key was held (or the server stalled): the deadline
      // decides, the client has given up. Answer nil and skip it.
      if (w.time_out) w.time_out();
      continue;
    }
    if (!w.claim()) continue;  // timed out or gone
    const std::uint64_t token = tokens_.Next(now.wall_us);
    Object* o;
    try {
      o = shard_.Put(nullptr, key, hash, w.owner, Expiry::At(now.mono_ms + w.ttl_ms), token);
    } catch (...) {
      w.grant(0);  // out of memory: the claimed waiter is answered, not left waiting
      throw;
    }
    w.grant(token);
    stats_.grants.fetch_add(1, std::memory_order_relaxed);
    stats_.handoffs.fetch_add(1, std::memory_order_relaxed);
    return o;
  }
  return nullptr;
}

Object* LockTable::GrantLeftover(std::string_view key, std::uint64_t hash) {
  auto it = entries_.find(key, hash);
  if (it == entries_.end()) return nullptr;
  Object* granted = GrantNext(key, hash, it.value());
  if (it->second.empty()) entries_.erase(it);
  return granted;
}

std::uint64_t LockTable::Enqueue(std::string_view key, std::uint64_t hash, LockWaiter waiter) {
  waiter.id = next_waiter_id_++;
  waiter.enqueued_ms = clock_.MonoMs();
  const std::uint64_t id = waiter.id;
  if (waiter.deadline_ms != 0 &&
      (earliest_deadline_ == 0 || waiter.deadline_ms < earliest_deadline_)) {
    earliest_deadline_ = waiter.deadline_ms;
  }
  Track(key, hash).push_back(std::move(waiter));
  stats_.waiters.fetch_add(1, std::memory_order_relaxed);
  return id;
}

void LockTable::RemoveWaiter(std::string_view key, std::uint64_t hash, std::uint64_t id) {
  auto it = entries_.find(key, hash);
  if (it == entries_.end()) return;
  Queue& queue = it.value();
  auto w =
      std::find_if(queue.begin(), queue.end(), [id](const LockWaiter& x) { return x.id == id; });
  if (w == queue.end()) return;
  queue.erase(w);
  stats_.waiters.fetch_sub(1, std::memory_order_relaxed);
  if (queue.empty()) entries_.erase(it);
}

std::size_t LockTable::TimeOutWaiters(std::int64_t now_ms) {
  if (earliest_deadline_ == 0 || earliest_deadline_ > now_ms) return 0;
  std::size_t timed_out = 0;
  std::int64_t earliest = 0;
  std::vector<std::string> idle;
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    Queue& queue = it.value();
    for (auto w = queue.begin(); w != queue.end();) {
      if (w->deadline_ms != 0 && w->deadline_ms <= now_ms) {
        if (stats_.wait_timer) {
          stats_.wait_timer->WaitEnded((now_ms - w->enqueued_ms) * 1'000'000, true);
        }
        if (w->time_out) w->time_out();
        w = queue.erase(w);
        stats_.waiters.fetch_sub(1, std::memory_order_relaxed);
        ++timed_out;
        continue;
      }
      if (w->deadline_ms != 0 && (earliest == 0 || w->deadline_ms < earliest)) {
        earliest = w->deadline_ms;
      }
      ++w;
    }
    if (queue.empty()) idle.push_back(it->first);
  }
  for (const auto& k : idle) entries_.erase(k);
  earliest_deadline_ = earliest;
  return timed_out;
}

std::optional<LockInfo> LockTable::Info(std::string_view key, std::uint64_t hash,
                                        const TimeSnapshot& now) {
  Object* o = shard_.Peek(key, hash, now.mono_ms);
  if (o == nullptr) return std::nullopt;
  LockInfo info;
  if (!o->is_container()) info.owner = std::string(o->value());  // a hash/zset has no owner
  info.ttl_ms = o->has_expire() ? o->expire_at() - now.mono_ms : -1;
  if (std::uint64_t token = o->token(); token != 0) info.token = token;
  if (auto it = entries_.find(key, hash); it != entries_.end()) info.waiters = it->second.size();
  return info;
}

Object* LockTable::OnKeyGone(std::string_view key, std::uint64_t hash) {
  return GrantLeftover(key, hash);  // only keys with parked waiters are tracked
}

void LockTable::OnCleared() {
  // GrantNext only adds keys to the shard; entries_ does not change shape in this loop.
  std::vector<std::string> idle;
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    GrantNext(it->first, HashKey(it->first), it.value());
    if (it->second.empty()) idle.push_back(it->first);
  }
  for (const auto& k : idle) entries_.erase(k);
}

LockTables::LockTables(KeyspaceSet& dbs, const Clock& clock)
    : clock_(clock), tables_(static_cast<std::size_t>(dbs.max_shards())) {
  for (int k = 0; k < dbs.created(); ++k) Add(dbs.by_identity(k));
}

LockTables::LockTables(Keyspace& keyspace, const Clock& clock)
    : clock_(clock), tables_(static_cast<std::size_t>(keyspace.base() + keyspace.shard_count())) {
  Add(keyspace);
}

void LockTables::Add(Keyspace& keyspace) {
  for (int i = 0; i < keyspace.shard_count(); ++i) {
    tables_[static_cast<std::size_t>(keyspace.base() + i)] =
        std::make_unique<LockTable>(keyspace.shard(i), clock_, tokens_, stats_);
  }
}

}  // namespace latch::store
