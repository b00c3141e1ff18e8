// ClusterLog's snapshots (docs/CLUSTER.md, "Snapshots"): the keyspace in the journal's base
// format, written by the rewrite's writer (journal/base_writer.h) on the Raft thread, with the
// member table (member_table.h), framed as snapshot_format.h says, and read back by the
// loader's appliers into an emptied keyspace.
#include <spdlog/logger.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <stdexcept>

#include "cluster/cluster_log.h"
#include "cluster/snapshot_format.h"
#include "journal/base_writer.h"
#include "latch/clock.h"
#include "store/keyspace.h"
#include "store/keyspace_set.h"
#include "store/lock_table.h"
#include "store/shard_guard.h"

namespace latch::cluster {
namespace {

// Every shard of `dbs` locked within `budget`, in ascending global index (the lock order,
// store/shard_guard.h), or none: a script may hold every shard for long, and the Raft thread
// must not stop sending heartbeats behind it.
bool LockAll(std::vector<std::pair<int, store::Keyspace*>> dbs, std::chrono::milliseconds budget,
             std::vector<store::Shard*>* held) {
  std::sort(dbs.begin(), dbs.end(),
            [](const auto& a, const auto& b) { return a.second->base() < b.second->base(); });
  const auto until = std::chrono::steady_clock::now() + budget;
  for (const auto& [db, ks] : dbs) {
    for (int i = 0; i < ks->shard_count(); ++i) {
      store::Shard& s = ks->shard(i);
      if (!s.mu().try_lock_until(until)) {
        for (auto it = held->rbegin(); it != held->rend(); ++it) store::UnlockShard(**it);
        held->clear();
        return false;
      }
      store::NoteHeld(s);
      held->push_back(&s);
    }
  }
  return true;
}

// CPU time of the calling thread in ms: what a snapshot costs, apart from the waits of a
// loaded machine (its wall time is logged too).
double ThreadCpuMs() {
  timespec t{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

}  // namespace

// On the Raft thread, after entry N was applied (libraft labels the snapshot N). A follower's
// keyspace is exactly the state at N: only this thread writes it. A leader's also holds the
// effects of records not committed yet (proposed in entries after N, or not proposed); a
// snapshot must not carry one, since a later leader may drop it. So every shard is locked
// (no record can be appended meanwhile) and the snapshot is taken only if every record with
// effects is in a committed entry; otherwise libraft is told "busy" and asks again after its
// next apply. Shards are released as they are written: later writes to them are after N.
std::optional<std::string> ClusterLog::Snapshot() {
  const auto started = std::chrono::steady_clock::now();
  const double cpu_started = ThreadCpuMs();
  std::vector<std::pair<int, store::Keyspace*>> dbs;
  std::vector<store::Shard*> held;
  // A drain holds every shard for this snapshot (Drain, below): nothing to lock or release.
  bool drained = false;
  {
    std::lock_guard lock(mu_);
    if (drain_state_ == DrainState::kHolding) {
      if (!CleanCut(drain_swaps_)) {
        ++snapshots_refused_;
        return std::nullopt;  // libraft asks again after the drain's entry applies
      }
      drain_state_ = DrainState::kSnapshotting;
      dbs = drain_dbs_;
      drained = true;
    }
  }
  if (!drained) {
    // A SWAPDB between reading the databases' keyspaces and holding them would write one's
    // keys under the other's number: then try again later. Once held, none can swap.
    const std::uint64_t swaps = p_.dbs.swaps();
    dbs = ListDatabases();
    const std::chrono::milliseconds budget(
        std::max<std::int64_t>(1, config_.heartbeat_interval_ms / 2));
    bool clean = LockAll(dbs, budget, &held);
    bool busy = false;
    if (clean) {
      std::lock_guard lock(mu_);
      clean = CleanCut(swaps);
      busy = !clean && !dirty_;
      if (busy) snapshot_wanted_ = true;
    }
    if (!clean) {
      for (auto it = held.rbegin(); it != held.rend(); ++it) store::UnlockShard(**it);
      ++snapshots_refused_;
      // Writes in flight: a leader drains (the proposer pauses), so that the next attempt
      // succeeds under continuous writes too.
      if (busy && leader_.load()) {
        drain_due_ = true;
        cv_.notify_all();
      }
      return std::nullopt;
    }
  }
  const auto drain_done = [&] {
    std::lock_guard lock(mu_);
    snapshot_wanted_ = false;  // a drain due for this one has nothing left to do
    if (!drained) return;
    drain_state_ = DrainState::kDone;
    cv_.notify_all();
  };
  std::string out;
  try {
    out = WriteSnapshot(dbs, drained);
  } catch (...) {
    drain_done();
    throw;
  }
  drain_done();
  const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - started;
  p_.log.info(
      "Raft node {}: snapshot of {} bytes taken in {:.1f} ms, {:.1f} ms of CPU ({} attempts "
      "refused with writes in flight before it{})",
      config_.id, out.size(), took.count(), ThreadCpuMs() - cpu_started, snapshots_refused_,
      drained ? "; the proposer drained for it" : "");
  snapshots_refused_ = 0;
  return out;
}

// Under mu_, every shard of the databases held: the keyspace is exactly what the committed
// units hold. No thread has a unit open on them (a unit is placed before its thread releases
// a shard, and these are all held), so the queued and proposed units must all be committed.
bool ClusterLog::CleanCut(std::uint64_t swaps) const {
  return !queue_.queued() && effects_in_flight_ == 0 && !dirty_ && p_.dbs.swaps() == swaps;
}

std::vector<std::pair<int, store::Keyspace*>> ClusterLog::ListDatabases() const {
  std::vector<std::pair<int, store::Keyspace*>> dbs;
  for (int db = 0; db < p_.dbs.count(); ++db) {
    if (store::Keyspace* ks = p_.dbs.Find(db)) dbs.emplace_back(db, ks);
  }
  return dbs;
}

// The databases' shards are held: by this thread (released as they are written), or by the
// drain (`drained`: left held, the proposer releases them).
std::string ClusterLog::WriteSnapshot(const std::vector<std::pair<int, store::Keyspace*>>& dbs,
                                      bool drained) {
  // WriteBase visits the databases in `dbs` order and each one's shards in index order: the
  // shards not released yet when it stops are the tail of that order.
  std::vector<store::Shard*> order;
  for (const auto& [db, ks] : dbs) {
    for (int i = 0; i < ks->shard_count(); ++i) order.push_back(&ks->shard(i));
  }
  std::size_t released = drained ? order.size() : 0;
  std::string records;
  const journal::BaseWriter writer{
      .lock = [](store::Shard&) { return true; },  // held since LockAll, or by the drain
      .unlock =
          [&](store::Shard& s) {
            if (drained) return;
            store::UnlockShard(s);
            ++released;
          },
      .deadline = [](const store::Object& o,
                     const TimeSnapshot& now) { return RelativeDeadline(o, now.mono_ms); },
      .flush = [&](const std::string& bytes) { records += bytes; },
  };
  try {
    journal::WriteBase(dbs, p_.locks.tokens().last(), p_.clock, writer);
  } catch (...) {
    for (std::size_t i = released; i < order.size(); ++i) store::UnlockShard(*order[i]);
    throw;
  }
  // The member table is written on this thread only: it is exactly the state at N too.
  const std::string members = EncodeMemberSection(members_.Copy());
  return EncodeSnapshot(members, records);
}

// On the proposer thread, when a snapshot was refused on the leader with writes in flight
// (docs/CLUSTER.md, "Snapshots": the drain). Every shard is taken (the snapshot's bounded
// wait: a script holding them makes the drain give up), so no command, expiry or hand-off adds
// effects; every unit is then complete (none can be open on a thread holding no shard), and
// what is queued is proposed with a read marker behind it, so that libraft applies at least
// one entry and asks for the snapshot again right after it. That attempt finds the cut clean
// and writes the shards under this hold. Commands wait at their shard locks meanwhile (their
// replies a little longer); nothing is refused. Bounded by a quarter of the election timeout:
// an entry that does not commit by then (a lost majority) ends the drain, and the next waits
// a second. No deadlock: the Raft thread never waits for this thread (a snapshot it starts
// during the hold reads the held shards, and this thread waits for it to end), and no other
// lock is held while shards are taken.
void ClusterLog::Drain() {
  const auto started = std::chrono::steady_clock::now();
  if (started < next_drain_ || !leader_.load()) return;
  const std::uint64_t swaps = p_.dbs.swaps();
  std::vector<std::pair<int, store::Keyspace*>> dbs = ListDatabases();
  std::vector<store::Shard*> held;
  const std::chrono::milliseconds budget(
      std::max<std::int64_t>(1, config_.heartbeat_interval_ms / 2));
  if (!LockAll(dbs, budget, &held)) {
    // Busy shards (clients between two commands, or a script): the next refusal tries again
    // a little later, so that a script holding every shard is not met with a wait per apply.
    next_drain_ = started + std::chrono::milliseconds(20);
    p_.log.debug("Raft node {}: no drain: the shards stayed busy for {} ms", config_.id,
                 budget.count());
    return;
  }
  {
    // A snapshot taken since the refusal (a quiet moment came first): nothing to drain for.
    std::lock_guard lock(mu_);
    if (!snapshot_wanted_) {
      for (auto it = held.rbegin(); it != held.rend(); ++it) store::UnlockShard(**it);
      return;
    }
  }
  const auto limit = started + std::chrono::milliseconds(
                                   std::max<std::int64_t>(10, config_.election_timeout_ms / 4));
  bool taken = false;
  {
    std::unique_lock lock(mu_);
    // Holding before anything is proposed: the snapshot after the marker's apply must see it.
    drain_dbs_ = std::move(dbs);
    drain_swaps_ = swaps;
    drain_state_ = DrainState::kHolding;
    queue_.Marker();
    // Everything queued, past the one entry in flight: the drain waits for all of it.
    ProposeQueued(lock, std::numeric_limits<std::size_t>::max());
    cv_.wait_until(lock, limit, [&] { return drain_state_ == DrainState::kDone || stopping_; });
    // A snapshot that started reads the held shards: it ends before they are released.
    cv_.wait(lock, [&] { return drain_state_ != DrainState::kSnapshotting; });
    taken = drain_state_ == DrainState::kDone;
    drain_state_ = DrainState::kIdle;
    drain_dbs_.clear();
  }
  for (auto it = held.rbegin(); it != held.rend(); ++it) store::UnlockShard(**it);
  const std::chrono::duration<double, std::milli> paused =
      std::chrono::steady_clock::now() - started;
  if (!taken) next_drain_ = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  p_.log.info("Raft node {}: drained for a snapshot: writes paused {:.1f} ms{}", config_.id,
              paused.count(), taken ? "" : " (no snapshot: entries did not apply in time)");
}

// On the Raft thread: at start-up (the last snapshot on disk) or from the leader. The bytes
// are checked whole before the keyspace is touched; records the loader cannot apply after
// that check mean a snapshot of another latchd version, and the node stops.
bool ClusterLog::Restore(std::string_view snapshot) {
  const auto started = std::chrono::steady_clock::now();
  std::string_view records, member_lines;
  MemberTable::Map members;
  std::string error;
  if (!SnapshotParts(snapshot, &records, &member_lines) ||
      !ParseMemberLines(member_lines, &members, &error)) {
    p_.log.warn(
        "Raft node {}: refused a snapshot of {} bytes that is not a whole latchd "
        "snapshot{}; the keyspace is unchanged",
        config_.id, snapshot.size(), error.empty() ? "" : " (" + error + ")");
    return false;
  }
  members_.Replace(std::move(members));
  if (!ApplyFromLog(records, /*replace=*/true, &error)) {
    p_.log.critical("Raft node {}: snapshot cannot be applied: {}; stopping", config_.id, error);
    p_.raft_follower.store(true);
    failed_ = true;
    if (p_.request_shutdown) p_.request_shutdown();
    return false;
  }
  const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - started;
  p_.log.info("Raft node {}: restored a snapshot of {} bytes in {:.1f} ms", config_.id,
              snapshot.size(), took.count());
  return true;
}

}  // namespace latch::cluster
