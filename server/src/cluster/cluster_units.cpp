// ClusterLog's records on the leader (docs/CLUSTER.md, "What a log entry is"): key events
// encoded in the journal's format into the appending thread's unit, which its shard releases
// place in the log and complete (store::LockPhases), and hand to the proposer's queue
// (entry_queue.h).
#include <mutex>
#include <string>

#include "cluster/cluster_log.h"
#include "journal/container_records.h"
#include "journal/journal.h"
#include "journal/record_codec.h"
#include "latch/clock.h"
#include "store/keyspace.h"
#include "store/keyspace_set.h"
#include "store/shard_guard.h"

namespace latch::cluster {

// A thread's open unit: its records, encoded off the log's mutex, starting in database 0.
// Set as the thread's store::LockPhases while open, so that its shard releases place and
// complete it (docs/CLUSTER.md, "What a log entry is": why that order is the shards').
struct ClusterLog::ThreadUnit final : store::LockPhases {
  ClusterLog* log = nullptr;  // null: no unit open on this thread
  std::string records;
  int db = 0;  // the database of the last record
  std::uint64_t first = 0;
  std::uint64_t last = 0;
  bool placed = false;
  std::uint64_t slot = 0;  // EntryQueue::Place's, once placed

  void Releasing(bool last_shard) override {
    if (last_shard) return log->CompleteUnit(*this);  // placed there too (one mutex round)
    if (!placed) log->PlaceUnit(*this);
  }
  // A shard taken after one was released: records under it may follow another thread's
  // writes to that shard which were placed after this unit, so they start a unit of their own.
  void Acquired() override {
    if (placed) log->CompleteUnit(*this);
  }
};

ClusterLog::ThreadUnit& ClusterLog::ThisThreadUnit() {
  thread_local ThreadUnit unit;
  return unit;
}

template <class Encode>
void ClusterLog::Append(int db, Encode&& encode) {
  ThreadUnit& u = ThisThreadUnit();
  if (u.log != nullptr && u.log != this) u.log->CompleteUnit(u);  // another node's (tests)
  const bool opens = u.log == nullptr;
  std::uint64_t seq;
  {
    std::lock_guard lock(mu_);
    seq = queue_.Number(opens);
  }
  if (opens) {
    u.log = this;
    u.first = seq;
    u.db = 0;
    u.placed = false;
    u.records.clear();
    store::SetLockPhases(&u);
  }
  if (db != u.db) {
    journal::EncodeSelect(&u.records, db);
    u.db = db;
  }
  encode(&u.records);
  u.last = seq;
  journal::detail::t_last_seq = seq;  // the connection's hold (journal/server_hooks.h)
  // Every key event and SWAPDB's record come under a shard lock; a record without one would
  // have no release to order it by, so it is a unit of its own, placed now.
  if (store::ThisThreadHeldCount() == 0) CompleteUnit(u);
}

void ClusterLog::PlaceUnit(ThreadUnit& u) {
  std::lock_guard lock(mu_);
  u.slot = queue_.Place(u.first);
  u.placed = true;
}

void ClusterLog::CompleteUnit(ThreadUnit& u) {
  store::SetLockPhases(nullptr);
  if (u.db != 0) journal::EncodeSelect(&u.records, 0);  // the next unit in an entry starts in 0
  bool wake = false;
  {
    std::lock_guard lock(mu_);
    if (!u.placed) u.slot = queue_.Place(u.first);
    queue_.Complete(u.slot, std::move(u.records), u.last);
    wake = WakeProposer();
  }
  u.records = std::string();
  u.log = nullptr;
  u.placed = false;
  if (wake) cv_.notify_one();
}

void ClusterLog::OnModified(store::Shard& shard, const store::KeyEvent& e) {
  if (!Recording()) return;
  const store::Object& o = *e.object;
  const std::int64_t deadline = RelativeDeadline(o, p_.clock.MonoMs());
  Append(p_.dbs.DbOf(shard), [&](std::string* out) {
    if (o.is_container()) {
      journal::EncodeContainer(out, o, deadline);
    } else if (const std::uint64_t token = o.token(); token != 0) {
      journal::EncodeLock(out, o.key(), o.value(), token, deadline);
    } else {
      journal::EncodeSet(out, o.key(), o.value(), deadline);
    }
  });
}

store::Object* ClusterLog::OnGone(store::Shard& shard, const store::KeyEvent& e) {
  if (Recording()) {
    Append(p_.dbs.DbOf(shard), [&](std::string* out) { journal::EncodeDel(out, e.key); });
  }
  return nullptr;
}

void ClusterLog::DatabasesSwapped(int a, int b) {
  if (!Recording()) return;
  // The record names both databases: the SELECT that Append may add in front is harmless.
  Append(a, [&](std::string* out) { journal::EncodeSwapDb(out, a, b); });
}

void ClusterLog::OnCleared(store::Shard& shard) {
  if (!Recording()) return;
  const int count = p_.dbs.shards_per_db();
  Append(p_.dbs.DbOf(shard),
         [&](std::string* out) { journal::EncodeFlushShard(out, shard.index() % count, count); });
}

}  // namespace latch::cluster
