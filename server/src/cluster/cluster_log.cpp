#include "cluster/cluster_log.h"

#include <spdlog/logger.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <chrono>
#include <random>
#include <stdexcept>

#include "client_registry.h"
#include "cluster/little_endian.h"
#include "journal/journal.h"
#include "journal/loader.h"
#include "key_event_router.h"
#include "latch/clock.h"
#include "store/keyspace.h"
#include "store/keyspace_set.h"
#include "store/lock_table.h"
#include "store/shard_guard.h"

namespace latch::cluster {
namespace {

// Set on the Raft thread while it applies an entry: the key events of that apply are the
// log's own, not new writes to record.
thread_local bool t_applying = false;

constexpr std::size_t kNonceBytes = 8;
// Group commit's bound: the proposer puts whole units into one entry up to this size (a
// bigger unit goes alone), so that one entry stays a few segment writes.
constexpr std::size_t kEntryBytes = std::size_t{1} << 20;
// How often the proposer looks at the node's role when nothing is proposed: a new leader
// accepts writes at most this long after its election barrier applied.
constexpr auto kRolePoll = std::chrono::milliseconds(10);

// Entries proposed and not settled: while one is in flight, the units completed behind it
// wait in the queue and go as one entry when it commits (group commit across a round trip).
// libraft sends one AppendEntries per follower per raft_apply and the followers answer each,
// so every extra entry in flight is messages and wake-ups on every node. Measured
// (bench/cluster.py's lock loop, 3 nodes on 2 cores, TCP_NODELAY on): 1 in flight, ~20
// units an entry, 12,000-14,400 cycles/s at p99 8-10 ms; 2: 11,000-11,300; no bound (4,100-
// 4,500 entries/s, 4-5 units each): 8,200-8,500 at p99 12-16 ms.
constexpr std::size_t kMaxInFlight = 1;

std::uint64_t RandomNonce() {
  std::random_device rd;
  std::uint64_t v = 0;
  while (v == 0) v = (std::uint64_t{rd()} << 32) ^ rd();
  return v;
}

// Every shard of every database created so far, locked in creation (= lock) order.
std::vector<store::Shard*> LockEveryShardToApply(store::KeyspaceSet& dbs) {
  std::vector<store::Shard*> held;
  for (int k = 0; k < dbs.created(); ++k) {
    store::Keyspace& ks = dbs.by_identity(k);
    for (int i = 0; i < ks.shard_count(); ++i) {
      store::Shard& s = ks.shard(i);
      if (store::ThisThreadHolds(s)) continue;
      store::LockShard(s, nullptr);
      held.push_back(&s);
    }
  }
  return held;
}

}  // namespace

std::int64_t RelativeDeadline(const store::Object& o, std::int64_t now_mono_ms) {
  if (!o.has_expire()) return 0;
  const std::int64_t left = std::max<std::int64_t>(1, o.expire_at() - now_mono_ms);
  return left + (left + 999) / 1000;
}

ClusterLog::ClusterLog(ClusterParts parts, RaftConfig config)
    : p_(std::move(parts)), config_(std::move(config)), nonce_(RandomNonce()) {
  RaftNodeOptions o;
  o.id = config_.id;
  o.address = config_.address;
  // A joining node bootstraps nothing: no peers (RaftNode::Loop::Open).
  if (!config_.join) {
    for (const auto& m : config_.members) o.peers.push_back(Peer{m.id, m.raft_address});
  }
  o.dir = config_.dir;
  o.election_timeout = std::chrono::milliseconds(config_.election_timeout_ms);
  o.heartbeat_interval = std::chrono::milliseconds(config_.heartbeat_interval_ms);
  o.snapshot_threshold = config_.snapshot_threshold;  // docs/CLUSTER.md, "Snapshots"
  o.snapshot_trailing = config_.snapshot_trailing;
  o.install_snapshot_timeout = std::chrono::milliseconds(config_.install_snapshot_timeout_ms);
  o.leader_probe = config_.leader_probe;
  std::error_code ec;
  std::filesystem::create_directories(o.dir, ec);
  if (ec) {
    throw std::runtime_error("Can't create raft-dir '" + config_.dir + "': " + ec.message());
  }
  p_.raft_follower.store(true);       // until this node is a leader that may serve
  p_.locks.tokens().UseTermFloor(0);  // tokens from the term, never the wall clock
  node_ = std::make_unique<RaftNode>(std::move(o), *this);
  proposer_ = std::thread([this] { RunProposer(); });
}

ClusterLog::~ClusterLog() { Stop(); }

void ClusterLog::Attach() {
  p_.key_events.set_replication(this);
  attached_ = true;
}

void ClusterLog::Stop() {
  HandOverBeforeStop();
  if (attached_.exchange(false)) p_.key_events.set_replication(nullptr);
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  cv_.notify_all();
  if (proposer_.joinable()) proposer_.join();
  node_->Stop();  // pending proposals end (Proposed: lost)
  std::lock_guard lock(mu_);
  for (auto& [seq, w] : waiters_) {
    boost::asio::post(*w.on, [done = std::move(w.done)] { done(false); });
  }
  waiters_.clear();
}

std::uint64_t ClusterLog::appended() const {
  std::lock_guard lock(mu_);
  return queue_.appended();
}

bool ClusterLog::Recording() const { return !t_applying; }

// Each pass proposes the complete units at the front of the queue, whole units to an entry
// (group commit). One thread calls Propose, so entries reach the log in the units' order.
void ClusterLog::RunProposer() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    const auto poll = std::chrono::steady_clock::now() + kRolePoll;
    while (!stopping_ && !ProposalDue() && !drain_due_.load()) {
      proposer_idle_ = true;
      const bool timed_out = cv_.wait_until(lock, poll) == std::cv_status::timeout;
      proposer_idle_ = false;
      if (timed_out) break;
    }
    if (stopping_) break;
    ProposeQueued(lock, kMaxInFlight);
    lock.unlock();
    if (drain_due_.exchange(false)) Drain();
    RefreshRole();
    RenewLease();
    ContinueHandOver();
    lock.lock();
  }
}

// Under mu_. Each of the proposer's wake-ups is a thread switch, and under load a unit
// completes about 20 times per entry committed: only a completion that finds the proposer
// asleep and able to propose wakes it (8,500 switches/s of the proposer's before, with
// 1,340 entries/s).
bool ClusterLog::ProposalDue() const { return queue_.ready() && in_flight_ < kMaxInFlight; }

bool ClusterLog::WakeProposer() {
  if (!proposer_idle_ || !ProposalDue()) return false;
  proposer_idle_ = false;  // one wake-up is enough
  return true;
}

// `lock` holds mu_. An entry of markers only is a barrier: its commit in this term proves
// that no other leader existed when the reads behind it ran. Losing it changes no keyspace.
void ClusterLog::ProposeQueued(std::unique_lock<std::mutex>& lock, std::size_t max_in_flight) {
  EntryQueue::Entry e;
  while (in_flight_ < max_in_flight && queue_.Take(kEntryBytes, &e)) {
    ++in_flight_;
    std::string payload;
    payload.reserve(kNonceBytes + e.records.size());
    AppendLeU64(&payload, nonce_);
    payload += e.records;
    if (e.effects) ++effects_in_flight_;
    lock.unlock();
    node_->Propose(std::move(payload),
                   [this, settles = std::move(e.settles), upto = e.upto, effects = e.effects](
                       const ProposeResult& r) { Proposed(settles, upto, effects, r); });
    lock.lock();
  }
}

// On the Raft thread. A committed entry settles its units; a record number is committed once
// every unit holding a number up to it is (the watermark, entry_queue.h). A failed entry
// settles nothing before it: libraft reports a proposal made after its step-down at once
// (kNotLeader) while earlier ones may still be pending, so every record not known committed,
// up to the entry's last, is answered as lost (the client's connection closes: outcome
// unknown), and the node is dirty if any entry with records was not known committed.
void ClusterLog::Proposed(const std::vector<std::uint64_t>& settles, std::uint64_t upto,
                          bool effects, const ProposeResult& r) {
  const bool ok = r.status == ProposeStatus::kOk;
  bool dirty = false;
  bool draining = false;
  bool wake_proposer = false;
  std::uint64_t unsettled = 0;
  {
    std::lock_guard lock(mu_);
    if (effects) --effects_in_flight_;
    --in_flight_;
    unsettled = queue_.watermark();
    if (!ok) {
      lost_.emplace_back(unsettled, upto);
      if (lost_.size() > 1024) lost_.pop_front();
      dirty = r.status != ProposeStatus::kShutdown && (effects || effects_in_flight_ > 0);
      ReleaseWaiters(upto, false);
    }
    queue_.Settle(settles);
    ReleaseWaiters(queue_.watermark(), true);
    wake_proposer = WakeProposer();
    draining = drain_state_ != DrainState::kIdle;
  }
  if (draining || wake_proposer) cv_.notify_all();  // the drain, or an idle proposer
  if (dirty && !dirty_.exchange(true)) {
    // This keyspace holds effects that a later leader may discard (docs/CLUSTER.md, "dirty
    // leader"). Until it can be rebuilt in-process, the node stops rather than serve them (as
    // a follower's reads, or as a leader that would grant a key the cluster still holds); a
    // restart replays the log into an empty keyspace.
    p_.log.critical(
        "Raft: this node lost leadership with writes not committed (records {}..{}: {}); its "
        "keyspace may hold them, so it stops. Restart it: it rebuilds its keyspace from the log",
        unsettled + 1, upto, r.error);
    p_.raft_follower.store(true);
    failed_ = true;
    if (p_.request_shutdown) p_.request_shutdown();
  }
}

// Under mu_: the waiters for records up to `upto` get `ok`.
void ClusterLog::ReleaseWaiters(std::uint64_t upto, bool ok) {
  auto end = waiters_.upper_bound(upto);
  for (auto it = waiters_.begin(); it != end; ++it) {
    boost::asio::post(*it->second.on, [done = std::move(it->second.done), ok] { done(ok); });
  }
  waiters_.erase(waiters_.begin(), end);
}

bool ClusterLog::WhenCommitted(std::uint64_t seq, std::function<void(bool)> done,
                               boost::asio::io_context& on) {
  std::lock_guard lock(mu_);
  for (const auto& [from, upto] : lost_) {
    if (seq > from && seq <= upto) {
      boost::asio::post(on, [done = std::move(done)] { done(false); });
      return true;
    }
  }
  if (seq <= queue_.watermark()) return false;
  if (stopping_) {
    boost::asio::post(on, [done = std::move(done)] { done(false); });
    return true;
  }
  waiters_.emplace(seq, Waiter{seq, &on, std::move(done)});
  return true;
}

void ClusterLog::FenceRead() {
  // Checked after the command ran: no other leader can be elected before the lease ends
  // (docs/CLUSTER.md), so none existed while it ran, and what it saw was the committed state
  // plus this leader's own records, which the reply waits for. Past the lease, the reply waits
  // for an entry proposed after the command ran instead.
  const auto now = std::chrono::steady_clock::now();
  last_read_.store(now.time_since_epoch().count(), std::memory_order_relaxed);
  const bool leased = now < node_->LeaseUntil();
  std::uint64_t seq;
  bool wake = false;
  {
    std::lock_guard lock(mu_);
    seq = leased ? queue_.appended() : queue_.Marker();
    wake = !leased && WakeProposer();
  }
  if (wake) cv_.notify_one();
  if (seq > journal::detail::t_last_seq) journal::detail::t_last_seq = seq;
}

// A leader that serves reads keeps its lease with a barrier once less than half of the
// election timeout is left, so that reads between writes rarely wait for one. Only while
// reads come: an idle cluster writes nothing (each barrier is an entry to store).
void ClusterLog::RenewLease() {
  if (!leader_ || renewing_) return;
  const auto now = std::chrono::steady_clock::now();
  const std::chrono::milliseconds timeout(config_.election_timeout_ms);
  const std::chrono::steady_clock::time_point last_read(
      std::chrono::steady_clock::duration(last_read_.load(std::memory_order_relaxed)));
  if (now - last_read > timeout || node_->LeaseUntil() - now > timeout / 2) return;
  renewing_ = true;
  node_->Barrier([this](const ProposeResult&) { renewing_ = false; });
}

void ClusterLog::RefreshRole() {
  const NodeStatus st = node_->Status();
  const bool leader =
      st.role == NodeStatus::Role::kLeader && st.leader_ready && !dirty_ && !handing_over_;
  // Before it grants: its tokens start at its term's floor, above every earlier term's
  // (docs/CLUSTER.md, "Fencing tokens").
  if (leader) p_.locks.tokens().UseTermFloor(st.term);
  if (leader_.exchange(leader) != leader) {
    p_.log.info("Raft node {}: {} (term {})", config_.id,
                leader ? "leader, accepting writes" : "follower, read-only", st.term);
    if (!leader) CloseClientsOnDemotion();
    if (leader) AnnounceSelf();
  }
  p_.raft_follower.store(!leader, std::memory_order_release);
}

// A leader that steps down alive closes its clients, as Sentinel has a demoted master do
// (CLIENT KILL TYPE normal and pubsub): they reconnect through discovery to the new leader,
// instead of meeting -READONLY, which ioredis does not follow (docs/CLUSTER.md).
void ClusterLog::CloseClientsOnDemotion() {
  std::size_t closed = 0;
  p_.clients.ForEach([&](ClientInfo& c) {
    if (!c.kill) return;  // a REST request's session: nothing to close
    // The client that waits for its RAFT TRANSFER reply (HandOver) stays.
    if (c.id == keep_client_.load()) return;
    c.kill();
    ++closed;
  });
  if (closed > 0)
    p_.log.info("Raft node {}: closed {} client(s) on stepping down", config_.id, closed);
}

void ClusterLog::Apply(EntryId id, std::string_view payload) {
  if (payload.size() < kNonceBytes) {
    p_.log.warn("Raft entry {} is too short to be latchd's; skipped", id.index);
    return;
  }
  const std::uint64_t nonce = LoadLeU64(payload);
  if (nonce == nonce_) return;  // proposed here: already in this keyspace
  std::string error;
  // A member entry (member_table.h) changes no keyspace; every node applies it, its proposer too.
  if (nonce == kMemberEntryNonce
          ? !ApplyMemberEntry(payload.substr(kNonceBytes), &error)
          : !ApplyFromLog(payload.substr(kNonceBytes), /*replace=*/false, &error)) {
    // A node that cannot apply the log must not serve what it holds.
    p_.log.critical("Raft entry {} (term {}) cannot be applied: {}; stopping", id.index, id.term,
                    error);
    p_.raft_follower.store(true);
    failed_ = true;
    if (p_.request_shutdown) p_.request_shutdown();
  }
}

bool ClusterLog::ApplyFromLog(std::string_view records, bool replace, std::string* error) {
  // Deadlines are relative to this moment (the header comment): a time base of 0.
  const TimeSnapshot now{p_.clock.MonoMs(), 0, 0};
  const journal::Databases dbs{p_.dbs,
                               [this](int db) -> store::Keyspace& { return p_.database(db); }};
  t_applying = true;
  // Every shard held for the whole entry (or snapshot), so that nothing on this node sees part
  // of one, as a reader on the leader never sees part of a command (TEST.LOCAL-EXISTS reads a
  // follower so); the appliers' own locks then lock nothing (store/shard_guard.h).
  const struct Held {
    std::vector<store::Shard*> shards;
    ~Held() {
      for (auto it = shards.rbegin(); it != shards.rend(); ++it) store::UnlockShard(**it);
    }
  } held{LockEveryShardToApply(p_.dbs)};
  if (replace) {
    for (int db = 0; db < p_.dbs.count(); ++db) {
      store::Keyspace* ks = p_.dbs.Find(db);
      for (int i = 0; ks != nullptr && i < ks->shard_count(); ++i) {
        store::ShardGuard lock(ks->shard(i));
        ks->shard(i).Clear();
      }
    }
  }
  const bool ok = journal::ApplyRecords(records, dbs, p_.locks.tokens(), now, error);
  t_applying = false;
  return ok;
}

}  // namespace latch::cluster
