#include "key_event_router.h"

namespace latch {

KeyEventRouter::KeyEventRouter(store::Keyspace& keyspace, store::LockTables& locks,
                               WatchRegistry& watches)
    : keyspace_(keyspace), locks_(locks), watches_(watches) {
  for (int i = 0; i < keyspace_.shard_count(); ++i) keyspace_.shard(i).set_events(this);
}

KeyEventRouter::~KeyEventRouter() {
  for (int i = 0; i < keyspace_.shard_count(); ++i) keyspace_.shard(i).set_events(nullptr);
}

void KeyEventRouter::OnModified(store::Shard& shard, const store::KeyEvent& e) {
  if (watches_.active()) watches_.Touch(e.key);
  if (journal_ != nullptr) journal_->OnModified(shard, e);
}

store::Object* KeyEventRouter::OnGone(store::Shard& shard, const store::KeyEvent& e) {
  if (watches_.active()) watches_.Touch(e.key);
  if (e.kind == store::KeyEvent::Kind::kExpired && e.object->token() != 0) {
    locks_.stats().expired_while_held.fetch_add(1, std::memory_order_relaxed);
  }
  // The journal logs the removal before a waiter's grant (which reports its own kWritten).
  if (journal_ != nullptr) journal_->OnGone(shard, e);
  store::LockTable& table = locks_.ForShard(shard.index());
  return table.tracked() == 0 ? nullptr : table.OnKeyGone(e.key, e.hash);
}

void KeyEventRouter::OnCleared(store::Shard& shard) {
  if (watches_.active()) watches_.TouchAll();
  if (journal_ != nullptr) journal_->OnCleared(shard);
  locks_.ForShard(shard.index()).OnCleared();
}

}  // namespace latch
