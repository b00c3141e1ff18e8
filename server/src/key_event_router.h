#pragma once
// The server's one KeyEvents hook (store/key_events.h), installed on every shard: it hands
// each key event to the concerns that listen to writes, in a fixed order, under the shard's
// lock. A modified key (OnModified): the held-locks gauge, WATCH (WatchRegistry::Touch), then
// the journal and the Raft log. A gone key (OnGone): WATCH, the counter of LOCK.ACQUIRE leases that
// ran out (LockStats::expired_while_held), the journal (its DEL), and last the lock waiters: the
// key is granted to its first waiter (store::LockTable), whose re-created key reports its own
// OnModified, so the journal records the DEL before the grant.
//
// The journal slot (set_journal) is the one seam where a write's effects leave the Op layer
// for a log: every event, grants included, in the order the shard applied them
// (docs/design/journal.md, "The journal seam"). A cluster node's Raft log
// (set_replication, cluster/cluster_log.h) listens right after the journal, to the same
// events.
// Commands never call any of these themselves, so none of them can be skipped.
#include <atomic>
#include <cstdint>
#include <functional>

#include "store/key_events.h"
#include "store/keyspace.h"
#include "store/keyspace_set.h"
#include "store/lock_table.h"
#include "watch_registry.h"

namespace latch {

class LockTimings;  // metrics/lock_timings.h

class KeyEventRouter final : public store::KeyEvents {
 public:
  // Installs itself on every shard of every database created so far (later ones: Install);
  // the destructor uninstalls it. WATCH and the journal learn each event's database from
  // `dbs`.
  KeyEventRouter(store::KeyspaceSet& dbs, store::LockTables& locks, WatchRegistry& watches);
  // A lone keyspace, database 0 (unit tests).
  KeyEventRouter(store::Keyspace& keyspace, store::LockTables& locks, WatchRegistry& watches);
  void Install(store::Keyspace& keyspace);
  ~KeyEventRouter() override;
  KeyEventRouter(const KeyEventRouter&) = delete;
  KeyEventRouter& operator=(const KeyEventRouter&) = delete;

  // An append-only journal (AOF): sees every event after the other listeners, under the
  // shard lock, in the order the shard applied them. nullptr detaches. Any thread, at any
  // time (CONFIG SET appendonly): the slot is an atomic, so an event racing the switch
  // reads the old or the new journal, whole (Persistence::Attach also holds every shard it
  // can while it switches, so that no event of those shards straddles it). The journal
  // must outlive the router or be detached first.
  void set_journal(store::KeyEvents* journal) {
    journal_.store(journal, std::memory_order_release);
  }
  // A cluster node's Raft log (cluster/cluster_log.h): sees every event after the journal,
  // with the journal's contract. Set before the workers start and cleared after they stop.
  void set_replication(store::KeyEvents* log) {
    replication_.store(log, std::memory_order_release);
  }
  // The server's CLIENT PAUSE test (ServerState::ExpiryPaused); none: expiry never held.
  void set_expiry_hold(std::function<bool(std::int64_t)> held) { expiry_held_ = std::move(held); }
  // The lock histograms and held-lock gauge of /metrics; none: not timed. Set before any
  // event.
  void set_lock_timings(LockTimings* timings) { timings_ = timings; }

  void OnModified(store::Shard& shard, const store::KeyEvent& e) override;
  store::Object* OnGone(store::Shard& shard, const store::KeyEvent& e) override;
  void OnClearing(store::Shard& shard) override;
  void OnCleared(store::Shard& shard) override;
  bool ExpiryHeld(std::int64_t now_ms) const override {
    return expiry_held_ && expiry_held_(now_ms);
  }

 private:
  int DbOf(const store::Shard& shard) const { return dbs_ == nullptr ? 0 : dbs_->DbOf(shard); }

  store::KeyspaceSet* dbs_ = nullptr;
  store::Keyspace* lone_ = nullptr;
  store::LockTables& locks_;
  WatchRegistry& watches_;
  LockTimings* timings_ = nullptr;
  // Read once per event (acquire: the journal's state set up before it was attached is
  // visible to the thread that reads it).
  store::KeyEvents* journal() const { return journal_.load(std::memory_order_acquire); }
  std::atomic<store::KeyEvents*> journal_{nullptr};
  store::KeyEvents* replication() const { return replication_.load(std::memory_order_acquire); }
  std::atomic<store::KeyEvents*> replication_{nullptr};
  std::function<bool(std::int64_t)> expiry_held_;
};

}  // namespace latch
