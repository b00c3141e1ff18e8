#pragma once
// A cluster node's replicated keyspace (docs/CLUSTER.md): the Raft log between the store's key
// events and libraft (raft_node.h).
//
// On the leader, ClusterLog listens on the key-event seam as the journal does (the router's
// replication slot) and encodes the resulting state of every key written, under the shard
// lock, in the journal's record format (journal/record_codec.h), each record numbered like a
// journal record (journal::ThisThreadLastSeq). A thread's records go to a buffer of its own,
// its unit (a command, an EXEC, a script, an expiry pass over one shard), which takes its
// place in the log when the thread first releases a shard and is complete once it holds none
// (store::LockPhases; entry_queue.h). A proposer thread hands the complete units at the front
// to RaftNode::Propose, several whole units to an entry (group commit), so a follower applies
// a unit whole or not at all, and the log holds units in the order the shards applied them
// (docs/CLUSTER.md, "What a log entry is", says why). A connection holds its replies until its
// last record is committed and applied, through the journal's hold
// (journal::HoldUntilDurable -> WhenCommitted).
//
// Deadlines in an entry are relative: the journal's PXAT records written against a time base
// of 0, so "PXAT n" in an entry means n ms after the entry is applied (the leader writes the
// ms left plus a margin for clock-rate differences, docs/CLUSTER.md "Expiry"). Followers apply
// entries on the Raft thread with the journal loader's appliers (journal::ApplyRecords).
//
// Each entry starts with this process's nonce: the leader skips the entries it proposed
// itself (their effects are in its keyspace already) and applies all others.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "cluster/cluster_log_view.h"
#include "cluster/entry_queue.h"
#include "cluster/member_table.h"
#include "cluster/raft_config.h"
#include "cluster/raft_node.h"
#include "journal/reply_log.h"
#include "store/key_events.h"

namespace spdlog {
class logger;
}  // namespace spdlog
namespace latch {
class Clock;
class ClientRegistry;
class KeyEventRouter;
namespace store {
class Keyspace;
class KeyspaceSet;
class LockTables;
}  // namespace store
}  // namespace latch

namespace latch::cluster {

// What the log uses of the server (server_state.h builds it): the keyspace it records and
// applies, the fencing tokens, the key-event seam it listens on, the clients it closes when
// the node steps down, the follower flag the dispatcher reads, and the way to stop the node.
struct ClusterParts {
  spdlog::logger& log;
  const Clock& clock;
  store::KeyspaceSet& dbs;
  std::function<store::Keyspace&(int db)> database;  // ServerState::Database: made on first use
  store::LockTables& locks;
  KeyEventRouter& key_events;
  ClientRegistry& clients;
  std::atomic<bool>& raft_follower;
  // ServerState::request_shutdown (set before any node starts).
  const std::function<void()>& request_shutdown;
};

// The deadline as an entry or a snapshot carries it: the ms left on this node's clock plus
// 1 ms per second for clock-rate differences between machines (docs/CLUSTER.md, "Expiry": a
// deadline on another node is never earlier). 0: no deadline.
std::int64_t RelativeDeadline(const store::Object& o, std::int64_t now_mono_ms);

class ClusterLog final : public store::KeyEvents, public StateMachine, public journal::ReplyLog {
 public:
  // Starts the Raft node (throws std::runtime_error when libraft cannot) and the proposer.
  // Attach() then installs the listener; the caller does it before any worker runs.
  ClusterLog(ClusterParts parts, RaftConfig config);
  ~ClusterLog() override;
  ClusterLog(const ClusterLog&) = delete;
  ClusterLog& operator=(const ClusterLog&) = delete;

  void Attach();
  // Detaches, stops the node (pending holds end as lost) and the proposer. Idempotent.
  void Stop();

  // journal::ReplyLog: "committed" = the entry holding the record is committed and applied.
  std::uint64_t appended() const override;
  bool WhenCommitted(std::uint64_t seq, std::function<void(bool)> done,
                     boost::asio::io_context& on) override;
  // What clients are told about the cluster (cluster_discovery.h): the configuration, the
  // node's state, the leader's followers, and whether this node serves as the leader.
  const RaftConfig& config() const { return config_; }
  NodeStatus Status() const { return node_->Status(); }
  std::vector<PeerProgress> Peers() const { return node_->Peers(); }
  bool serving() const { return leader_.load(); }
  // The read fence: every record appended so far (the read may have seen any of them), and
  // past the leader's lease, a marker that makes the next entry a barrier (ReadIndex).
  void FenceRead() override;
  void DatabasesSwapped(int a, int b) override;
  // This node stopped itself on a fault (a lost entry with effects, an entry it cannot apply).
  bool failed() const { return failed_.load(); }

  // Membership and leadership (cluster_handover.cpp): RAFT ADD/REMOVE go to the node as is.
  RaftNode& node() const { return *node_; }
  // The members clients are told of (cluster_members.cpp; member_table.h, JoinMembers).
  std::vector<KnownMember> KnownMembers() const;
  // RAFT ADD: a member entry with the node's client address, and once it is committed (every
  // node that learns of the member then knows where it takes clients) RaftNode::Add.
  void AddMember(std::uint64_t id, std::string raft_address, ClientAddress client,
                 RaftNode::ChangeDone done);
  // RAFT REMOVE: RaftNode::Remove, then an entry that forgets its address.
  void RemoveMember(std::uint64_t id, RaftNode::ChangeDone done);
  // RAFT TRANSFER: stops serving (every client but `keep_client` closed, as on stepping
  // down), waits (one election timeout at most) until every record appended is committed,
  // so that libraft refusing proposals during the transfer loses none, then hands leadership
  // to `target` (0: the most up-to-date voter). `done` runs once, on another thread, with ""
  // or why it failed; on failure this node serves again if it still leads.
  void HandOver(std::uint64_t target, std::int64_t keep_client, RaftNode::ChangeDone done);

  // store::KeyEvents, under the shard lock.
  void OnModified(store::Shard& shard, const store::KeyEvent& e) override;
  store::Object* OnGone(store::Shard& shard, const store::KeyEvent& e) override;
  void OnCleared(store::Shard& shard) override;

  // StateMachine, on the Raft thread.
  void Apply(EntryId id, std::string_view payload) override;
  std::optional<std::string> Snapshot() override;  // cluster_snapshot.cpp
  bool Restore(std::string_view snapshot) override;

 private:
  struct Waiter {
    std::uint64_t seq;
    boost::asio::io_context* on;
    std::function<void(bool)> done;
  };
  // The records this thread appended since its unit opened (cluster_log.cpp).
  struct ThreadUnit;
  static ThreadUnit& ThisThreadUnit();
  template <class Encode>
  void Append(int db, Encode&& encode);
  void PlaceUnit(ThreadUnit& u);     // the thread's first shard release
  void CompleteUnit(ThreadUnit& u);  // it holds no shard, or takes one again
  void RunProposer();
  // The queue's complete units, while fewer than `max_in_flight` entries are uncommitted.
  void ProposeQueued(std::unique_lock<std::mutex>& lock, std::size_t max_in_flight);
  bool ProposalDue() const;  // under mu_: complete units, and room in flight
  bool WakeProposer();       // under mu_: whether to notify cv_ for the proposer
  void ReleaseWaiters(std::uint64_t upto, bool ok);
  void Proposed(const std::vector<std::uint64_t>& settles, std::uint64_t upto, bool effects,
                const ProposeResult& r);
  void RefreshRole();
  void CloseClientsOnDemotion();
  void RenewLease();  // the proposer's, after RefreshRole
  // The hand-over (cluster_handover.cpp): the proposer's step after RenewLease, its end, and
  // Stop()'s (a leader that stops hands over first).
  void ContinueHandOver();
  void EndHandOver(const std::string& error);
  void HandOverBeforeStop();
  bool Recording() const;
  // The snapshot drain (cluster_snapshot.cpp): a leader whose snapshot was refused with
  // writes in flight holds every shard, proposes what is queued and waits until it is
  // applied, so that libraft's next attempt, right after that apply, finds a clean cut.
  void Drain();
  bool CleanCut(std::uint64_t swaps) const;  // under mu_, every shard held
  std::vector<std::pair<int, store::Keyspace*>> ListDatabases() const;
  std::string WriteSnapshot(const std::vector<std::pair<int, store::Keyspace*>>& dbs, bool drained);
  // cluster_members.cpp: a member entry applied (on the Raft thread; false: unreadable), and a
  // new leader's entry with its own client address when the table does not hold it.
  bool ApplyMemberEntry(std::string_view after_nonce, std::string* error);
  void AnnounceSelf();
  // Applies records as the log's own (their key events are not recorded again), deadlines
  // relative to now; `replace` empties every database first (a snapshot). False with the
  // reason when a record is not one the journal writes.
  bool ApplyFromLog(std::string_view records, bool replace, std::string* error);

  ClusterParts p_;
  RaftConfig config_;
  const std::uint64_t nonce_;
  std::unique_ptr<RaftNode> node_;

  mutable std::mutex mu_;  // the fields below
  std::condition_variable cv_;
  // Record numbers, units placed and not proposed, read markers, the commit watermark.
  EntryQueue queue_;
  std::size_t effects_in_flight_ = 0;  // proposed entries with records, not settled
  std::size_t in_flight_ = 0;          // proposed entries, not settled
  bool proposer_idle_ = false;         // the proposer waits on cv_ for a proposal due
  std::deque<std::pair<std::uint64_t, std::uint64_t>> lost_;  // record ranges never committed
  std::multimap<std::uint64_t, Waiter> waiters_;
  bool stopping_ = false;
  std::thread proposer_;
  std::atomic<bool> leader_{false};
  std::atomic<bool> dirty_{false};  // an entry was lost: the node is stopping (Proposed)
  std::atomic<bool> attached_{false};
  std::atomic<bool> failed_{false};
  std::atomic<std::int64_t> last_read_{0};  // steady_clock ticks of the last FenceRead
  std::atomic<bool> renewing_{false};       // a lease-renewal barrier is in flight

  // A leadership hand-over in progress (HandOver). handing_over_ keeps RefreshRole from
  // serving; the rest is under handover_mu_.
  std::atomic<bool> handing_over_{false};
  std::atomic<std::int64_t> keep_client_{0};  // not closed on stepping down (0: none)
  std::mutex handover_mu_;
  bool handover_started_ = false;  // RaftNode::Transfer called
  std::uint64_t handover_target_ = 0;
  std::chrono::steady_clock::time_point handover_deadline_{};
  RaftNode::ChangeDone handover_done_;
  std::uint64_t snapshots_refused_ = 0;  // Raft thread: since the last snapshot taken
  // The drain: due (set by a refused Snapshot on the leader), and its state under mu_.
  enum class DrainState { kIdle, kHolding, kSnapshotting, kDone };
  std::atomic<bool> drain_due_{false};
  DrainState drain_state_ = DrainState::kIdle;
  std::vector<std::pair<int, store::Keyspace*>> drain_dbs_;  // held by the proposer (kHolding)
  std::uint64_t drain_swaps_ = 0;
  bool snapshot_wanted_ = false;  // refused as busy on the leader, none taken since
  std::chrono::steady_clock::time_point next_drain_{};  // proposer: after a drain that failed
  MemberTable members_;  // client addresses from member entries and snapshots
};

}  // namespace latch::cluster
