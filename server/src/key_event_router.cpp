#include "key_event_router.h"

#include <chrono>

#include "latch/clock.h"
#include "metrics/lock_timings.h"

namespace latch {
namespace {
std::int64_t MonoNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
std::int64_t WallNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// When the lease ended, on the steady clock: now for a release or delete; for an expiry, its
// deadline (the injected clock's ms, mapped through how long ago it was), so a hand-off
// delayed by a late expiry shows.
std::int64_t LeaseEnd(const store::KeyEvent& e, const LockTimings& t) {
  const std::int64_t now = MonoNanos();
  if (e.kind != store::KeyEvent::Kind::kExpired || t.clock == nullptr) return now;
  const std::int64_t late_ms = t.clock->MonoMs() - e.object->expire_at();
  return now - (late_ms > 0 ? late_ms * 1'000'000 : 0);
}

// A LOCK.ACQUIRE token is the grant's wall-clock nanoseconds (or just above the last token).
void ObserveHold(LockTimings& t, int shard, std::uint64_t token) {
  t.Gone(shard);
  t.hold.Observe(WallNanos() - static_cast<std::int64_t>(token));
}
}  // namespace

KeyEventRouter::KeyEventRouter(store::KeyspaceSet& dbs, store::LockTables& locks,
                               WatchRegistry& watches)
    : dbs_(&dbs), locks_(locks), watches_(watches) {
  for (int k = 0; k < dbs.created(); ++k) Install(dbs.by_identity(k));
}

KeyEventRouter::KeyEventRouter(store::Keyspace& keyspace, store::LockTables& locks,
                               WatchRegistry& watches)
    : lone_(&keyspace), locks_(locks), watches_(watches) {
  Install(keyspace);
}

void KeyEventRouter::Install(store::Keyspace& keyspace) {
  for (int i = 0; i < keyspace.shard_count(); ++i) keyspace.shard(i).set_events(this);
}

KeyEventRouter::~KeyEventRouter() {
  auto uninstall = [](store::Keyspace& ks) {
    for (int i = 0; i < ks.shard_count(); ++i) ks.shard(i).set_events(nullptr);
  };
  if (lone_ != nullptr) uninstall(*lone_);
  for (int k = 0; dbs_ != nullptr && k < dbs_->created(); ++k) uninstall(dbs_->by_identity(k));
}

void KeyEventRouter::OnModified(store::Shard& shard, const store::KeyEvent& e) {
  // latch_locks_held counts the keys that carry a LOCK.ACQUIRE token: one more when such a
  // key is created (an overwrite keeps the key's token, docs/LOCKS.md), one less when it is
  // gone (OnGone), all of a shard's on a flush (OnCleared).
  if (e.kind == store::KeyEvent::Kind::kWritten && e.created && e.object->token() != 0) {
    if (timings_ != nullptr) timings_->Granted(shard.index());
  }
  if (watches_.active()) watches_.Touch(DbOf(shard), e.key, e.hash);
  if (store::KeyEvents* j = journal()) j->OnModified(shard, e);
  if (store::KeyEvents* r = replication()) r->OnModified(shard, e);
}

store::Object* KeyEventRouter::OnGone(store::Shard& shard, const store::KeyEvent& e) {
  if (watches_.active()) watches_.Touch(DbOf(shard), e.key, e.hash);
  if (e.kind == store::KeyEvent::Kind::kExpired && e.object->token() != 0) {
    locks_.stats().expired_while_held.fetch_add(1, std::memory_order_relaxed);
  }
  // The journal logs the removal before a waiter's grant (which reports its own kWritten).
  if (store::KeyEvents* j = journal()) j->OnGone(shard, e);
  if (store::KeyEvents* r = replication()) r->OnGone(shard, e);
  store::LockTable& table = locks_.ForShard(shard.index());
  LockTimings* timings = timings_;
  if (timings == nullptr) return table.tracked() == 0 ? nullptr : table.OnKeyGone(e.key, e.hash);
  if (e.object->token() != 0) ObserveHold(*timings, shard.index(), e.object->token());
  if (table.tracked() == 0) return nullptr;  // no waiter: no hand-off to time (no clock read)
  const std::int64_t lease_end_ns = LeaseEnd(e, *timings);  // before the object is reused by a grant
  store::Object* granted = table.OnKeyGone(e.key, e.hash);
  if (granted != nullptr) timings->handoff.Observe(MonoNanos() - lease_end_ns);
  return granted;
}

void KeyEventRouter::OnClearing(store::Shard& shard) {
  if (!watches_.active()) return;
  // Redis 7.0 (touchAllWatchedKeysInDb): a flush dirties the watchers of keys that exist,
  // not of every watched name. Now 0 finds a key whether or not its deadline passed, without
  // expiring it.
  watches_.TouchIf(DbOf(shard), [&shard](std::string_view key) {
    const std::uint64_t hash = store::HashKey(key);
    return shard.Peek(key, hash, 0) != nullptr;
  });
}

void KeyEventRouter::OnCleared(store::Shard& shard) {
  if (store::KeyEvents* j = journal()) j->OnCleared(shard);
  if (store::KeyEvents* r = replication()) r->OnCleared(shard);
  locks_.ForShard(shard.index()).OnCleared();
  if (timings_ != nullptr) timings_->Cleared(shard.index());
}

}  // namespace latch
