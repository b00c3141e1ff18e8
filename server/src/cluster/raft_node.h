#pragma once
// One member of a Raft cluster, on Debian's libraft (0.15, C) with its libuv I/O: the log and
// snapshots on disk in `dir`, the peers over TCP. latch does not implement Raft itself.
//
// Threads: libraft is single-threaded. A RaftNode runs its own thread with a libuv loop that
// owns every libraft object; all libraft calls happen there. Other threads talk to it through
// a queue and a uv_async_t (Propose, Barrier, Stop) and read a copy of its state (Status),
// refreshed after every loop iteration. libuv's thread pool writes the log (O_DSYNC).
//
// Entries: the payload given to Propose, framed by this wrapper with the term it was proposed
// in and padded to a multiple of 8 bytes (libraft's FSM apply callback gets neither the term
// nor the index, and its log format needs the padding; docs/CLUSTER.md, "libraft facts").
// Each committed entry reaches StateMachine::Apply on every node, in log order, with its
// (term, index) and the payload as proposed.
//
// libraft and libuv headers stay out of this one: users include neither.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace latch::cluster {

struct Peer {
  std::uint64_t id = 0;  // > 0, unique in the cluster
  std::string address;   // "IPv4:port", where the peer's Raft transport listens
};

// A log position. Strictly increasing in the log; a term only ever has one leader.
struct EntryId {
  std::uint64_t term = 0;
  std::uint64_t index = 0;
  friend bool operator==(const EntryId&, const EntryId&) = default;
};

struct RaftNodeOptions {
  std::uint64_t id = 0;
  std::string address;        // this node's Raft address, "IPv4:port"
  std::vector<Peer> peers;    // first membership (this node included); used only when
                              // `dir` holds no Raft state yet (bootstrap)
  std::filesystem::path dir;  // must exist; libraft's segments, metadata and snapshots
  std::chrono::milliseconds election_timeout{1000};   // libraft randomises it in [1x, 2x)
  std::chrono::milliseconds heartbeat_interval{100};  // also libraft's tick period
  unsigned snapshot_threshold = 1024;  // entries applied since the last snapshot to take one
  unsigned snapshot_trailing = 128;    // entries kept in the log behind a snapshot
  // How long the leader waits for a follower to report a snapshot it sent installed before
  // it probes that follower again. Also how long a follower that came back with a shorter
  // log than the leader last saw (a wiped directory) waits after installing the snapshot:
  // libraft ignores its rejections until then (docs/CLUSTER.md, "libraft facts").
  std::chrono::milliseconds install_snapshot_timeout{30000};  // libraft's default
  // Watch the leader's Raft port from a follower and start an election as soon as the
  // leader's process is gone (leader_probe.h; docs/CLUSTER.md, "Failover").
  bool leader_probe = true;
};

// The replicated state. Every method runs on the node's thread (never two at once), and must
// not block for long: heartbeats wait behind it.
class StateMachine {
 public:
  virtual ~StateMachine() = default;
  // A committed entry, in log order. The same (id, payload) sequence on every node.
  virtual void Apply(EntryId id, std::string_view payload) = 0;
  // The state after every entry applied so far, as bytes (kept by libraft as a snapshot).
  // nullopt: not now (libraft's RAFT_BUSY); libraft asks again after its next apply.
  virtual std::optional<std::string> Snapshot() = 0;
  // Replaces the state by a snapshot's bytes (at start-up, or from the leader when this node
  // is too far behind). False: unreadable, and the state must be left as it was; at start-up
  // the RaftNode constructor then throws, from the leader the snapshot is refused.
  virtual bool Restore(std::string_view snapshot) = 0;
};

enum class ProposeStatus {
  kOk,
  kNotLeader,       // not the leader (or handing leadership over): nothing was appended
  kLeadershipLost,  // appended, then leadership was lost: it may or may not commit later
  kShutdown,        // the node is stopping
  kFailed,          // libraft refused (message in ProposeResult::error)
};

struct ProposeResult {
  ProposeStatus status = ProposeStatus::kFailed;
  EntryId id;         // kOk: where the entry was committed (and, here, applied)
  std::string error;  // libraft's message when not kOk
};

struct NodeStatus {
  enum class Role { kUnavailable, kFollower, kCandidate, kLeader };
  Role role = Role::kUnavailable;
  std::uint64_t term = 0;
  std::uint64_t leader_id = 0;  // 0: no leader known
  std::string leader_address;
  // The leader has committed and applied an entry of its own term (the barrier it proposes
  // on election): everything committed before it is applied here. Only then may it serve.
  bool leader_ready = false;
  std::uint64_t commit_index = 0;
  std::uint64_t applied_index = 0;
  std::uint64_t last_index = 0;      // last entry in this node's log
  std::uint64_t snapshot_index = 0;  // last entry of the last snapshot taken or installed
  // How many times this node learnt of a new leader (another id, or the same in a new term)
  // since it started (latch_raft_leader_changes_total).
  std::uint64_t leader_changes = 0;
};

// What the leader knows of one follower (RaftNode::Peers; INFO replication, SENTINEL).
struct PeerProgress {
  std::uint64_t id = 0;
  std::uint64_t match_index = 0;  // the last entry it reported holding
  // When the leader last had a message from it (libraft's recent_recv, sampled after every
  // loop iteration); the epoch when never in this term.
  std::chrono::steady_clock::time_point last_heard{};
};

// A member of the configuration (RaftNode::Members).
struct RaftMember {
  enum class Role { kVoter, kStandby, kSpare };
  std::uint64_t id = 0;
  std::string address;
  Role role = Role::kVoter;
};

class RaftNode {
 public:
  using Done = std::function<void(const ProposeResult&)>;

  // Opens `options.dir` (bootstrapping it with `options.peers` when it holds no Raft state),
  // starts the node's thread and returns once libraft runs. Throws std::runtime_error with
  // libraft's message when it cannot start (bad directory, port in use, ...). `fsm` must
  // outlive the node.
  RaftNode(RaftNodeOptions options, StateMachine& fsm);
  // Stop().
  ~RaftNode();
  RaftNode(const RaftNode&) = delete;
  RaftNode& operator=(const RaftNode&) = delete;

  // Appends `payload` to the log if this node is the leader. `done` runs on the node's thread
  // once the entry is committed and applied here (kOk with its id), or when it failed. Any
  // thread; the order of calls is the order in the log.
  void Propose(std::string payload, Done done);
  std::future<ProposeResult> Propose(std::string payload);
  // Appends a barrier (an entry the state machine never sees): `done` runs once it and
  // everything before it are committed and applied. A leader's ReadIndex round trip.
  void Barrier(Done done);

  // A copy of the node's state after its last loop iteration. Any thread.
  NodeStatus Status() const;
  // Until when this leader may answer reads alone (its lease, from the start of its last
  // committed round trip; docs/CLUSTER.md argues the bound). A time point in the past when
  // it holds none.
  std::chrono::steady_clock::time_point LeaseUntil() const;
  // The leader's followers (voters and others), in configuration order; empty when this node
  // is not the leader. Any thread.
  std::vector<PeerProgress> Peers() const;

  // Membership and leadership (RAFT ADD, REMOVE, TRANSFER; docs/CLUSTER.md, "Membership and
  // operations"). Each runs on the node's thread; `done` runs there once libraft settled it,
  // with "" on success or the reason it failed (libraft's message, or this wrapper's).
  using ChangeDone = std::function<void(const std::string& error)>;
  // The configuration as this node knows it (the last one in its log, committed or not), in
  // libraft's order. Any thread.
  std::vector<RaftMember> Members() const;
  // Hands leadership to voter `id` (0: the voter whose log is the most up to date). The lease
  // is dropped first (no read is answered alone after this call) and libraft refuses
  // proposals until the transfer ends. Success: the target was seen leading within libraft's
  // bound (one election timeout).
  void Transfer(std::uint64_t id, ChangeDone done);
  // Adds a node at `address` ("IPv4:port") as a spare, then makes it a voter; libraft catches
  // its log up before the configuration that counts it is appended.
  void Add(std::uint64_t id, std::string address, ChangeDone done);
  void Remove(std::uint64_t id, ChangeDone done);

  // Test mode only (TEST.FAULT RAFT-DROP; docs/CLUSTER.md, "Partition"): from the next
  // message on, every Raft message this node sends to or receives from `peers` (DropAllLinks:
  // from any peer) is dropped, as a network partition would, until HealLinks. The node goes
  // on running and serving its clients meanwhile. Any thread. `in`/`out`: only the messages
  // received from them, or only those sent to them (an asymmetric link).
  void DropLinks(std::vector<std::uint64_t> peers, bool in, bool out);
  void DropAllLinks(bool in, bool out);
  void HealLinks();

  // Closes libraft (pending proposals end with kLeadershipLost or kShutdown), its sockets
  // and files, and joins the thread. Idempotent.
  void Stop();

 private:
  struct Loop;
  // Queues `task` for the node's thread (Transfer, Add, Remove); `stopping` tells it to refuse.
  // False, with nothing queued, once the node stops.
  bool Post(std::function<void(bool stopping)> task);
  std::unique_ptr<Loop> loop_;
};

}  // namespace latch::cluster
