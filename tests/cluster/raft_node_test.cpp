// latch_cluster's RaftNode (libraft 0.15 + libuv) with three nodes in this process, on
// 127.0.0.1 ports picked at run time, their logs in a temporary directory: election,
// replication in one order, failover after the leader stops, catch-up of a restarted node and
// of a wiped one (through the leader's snapshot), and a leader cut off from its majority. Prints
// the election time and the proposal rate it measured (docs/CLUSTER.md quotes them).
#include "cluster/raft_node.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <future>
#include <iostream>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "support/free_port.h"
#include "support/wire_expect.h"

namespace latch::cluster {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

constexpr auto kElectionTimeout = 1000ms;  // libraft's default, and latch's
constexpr auto kElectionLimit = 20s;       // bounded waits; a loaded CI runner is slow
constexpr auto kCatchUpLimit = 30s;
// libraft's default is 30 s; a wiped follower waits that long after installing a snapshot.
constexpr auto kInstallSnapshotTimeout = 2000ms;

double MillisSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Records every applied entry; its snapshot is that whole record, so a node restored from a
// snapshot still shows the full history and can be compared entry by entry.
class RecordingMachine : public StateMachine {
 public:
  struct Entry {
    EntryId id;
    std::string payload;
    friend bool operator==(const Entry&, const Entry&) = default;
    friend void PrintTo(const Entry& e, std::ostream* os) {
      *os << "(" << e.id.term << "," << e.id.index << ")=" << e.payload;
    }
  };

  void Apply(EntryId id, std::string_view payload) override {
    std::lock_guard lock(mu_);
    entries_.push_back({id, std::string(payload)});
  }
  std::optional<std::string> Snapshot() override {
    std::lock_guard lock(mu_);
    std::string out;
    for (const Entry& e : entries_) {
      out += std::to_string(e.id.term) + " " + std::to_string(e.id.index) + " " +
             std::to_string(e.payload.size()) + " " + e.payload;
    }
    return out;
  }
  bool Restore(std::string_view s) override {
    std::vector<Entry> restored;
    std::string text(s);
    std::size_t at = 0;
    while (at < text.size()) {
      unsigned long long term = 0, index = 0;
      std::size_t len = 0;
      int used = 0;
      if (std::sscanf(text.c_str() + at, "%llu %llu %zu %n", &term, &index, &len, &used) != 3 ||
          at + used + len > text.size()) {
        return false;
      }
      restored.push_back({{term, index}, text.substr(at + used, len)});
      at += used + len;
    }
    std::lock_guard lock(mu_);
    largest_restore_ = std::max(largest_restore_, restored.size());
    entries_ = std::move(restored);
    return true;
  }
  std::vector<Entry> Entries() const {
    std::lock_guard lock(mu_);
    return entries_;
  }
  std::size_t Size() const {
    std::lock_guard lock(mu_);
    return entries_.size();
  }
  // The most entries a restored snapshot held (0: none restored).
  std::size_t LargestRestore() const {
    std::lock_guard lock(mu_);
    return largest_restore_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<Entry> entries_;
  std::size_t largest_restore_ = 0;
};

struct Member {
  RaftNodeOptions options;
  std::unique_ptr<RecordingMachine> fsm;
  std::unique_ptr<RaftNode> node;
};

class RaftClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "latch-raft-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
  }
  void TearDown() override {
    for (Member& m : members_) m.node.reset();
    std::error_code ignored;
    fs::remove_all(root_, ignored);
  }

  bool leader_probe_ = true;  // before StartCluster
  // Three fresh members. Another process may take a port between FreePort() and libraft's
  // bind: then everything is wiped and tried again on new ports.
  void StartCluster() {
    for (int attempt = 0; attempt < 5; ++attempt) {
      members_.clear();
      std::vector<Peer> peers;
      for (std::uint64_t id = 1; id <= 3; ++id) {
        peers.push_back({id, "127.0.0.1:" + std::to_string(test::FreePort())});
      }
      try {
        for (const Peer& p : peers) {
          Member m;
          m.options = {
              .id = p.id,
              .address = p.address,
              .peers = peers,
              .dir = root_ / ("node" + std::to_string(p.id)) / ("try" + std::to_string(attempt)),
              .election_timeout = kElectionTimeout,
              .snapshot_threshold = 256,
              .snapshot_trailing = 64,
              .install_snapshot_timeout = kInstallSnapshotTimeout,
              .leader_probe = leader_probe_};
          fs::create_directories(m.options.dir);
          members_.push_back(std::move(m));
          Start(members_.size() - 1);
        }
        return;
      } catch (const std::exception& e) {
        std::cerr << "attempt " << attempt << ": " << e.what() << "\n";
      }
    }
    FAIL() << "no cluster could be started";
  }
  // (Re)starts member i on its directory with an empty state machine.
  void Start(std::size_t i) {
    members_[i].node.reset();
    members_[i].fsm = std::make_unique<RecordingMachine>();
    members_[i].node = std::make_unique<RaftNode>(members_[i].options, *members_[i].fsm);
  }
  // The member that is leader and ready (its election barrier applied), or -1 after `limit`.
  int WaitForLeader(std::chrono::milliseconds limit) {
    int found = -1;
    test::Eventually(
        [&] {
          for (std::size_t i = 0; i < members_.size(); ++i) {
            if (members_[i].node && members_[i].node->Status().leader_ready) {
              found = static_cast<int>(i);
              return true;
            }
          }
          return false;
        },
        limit);
    return found;
  }
  // Proposes `n` entries "<tag>-<k>" at once; returns their results in order of proposal.
  std::vector<ProposeResult> ProposeMany(int leader, const std::string& tag, int n) {
    std::vector<std::future<ProposeResult>> futures;
    for (int k = 0; k < n; ++k) {
      futures.push_back(members_[leader].node->Propose(tag + "-" + std::to_string(k)));
    }
    std::vector<ProposeResult> results;
    for (auto& f : futures) {
      if (f.wait_for(kCatchUpLimit) != std::future_status::ready) {
        ADD_FAILURE() << "proposal not answered within the limit";
        return results;
      }
      results.push_back(f.get());
    }
    return results;
  }
  // Waits until every running member applied `n` entries, then expects them all equal.
  void ExpectSameHistory(std::size_t n) {
    EXPECT_TRUE(test::Eventually(
        [&] {
          return std::all_of(members_.begin(), members_.end(),
                             [&](const Member& m) { return !m.node || m.fsm->Size() >= n; });
        },
        kCatchUpLimit));
    const Member* first = nullptr;
    for (const Member& m : members_) {
      if (!m.node) continue;
      if (first == nullptr) first = &m;
      EXPECT_EQ(m.fsm->Entries(), first->fsm->Entries()) << "node " << m.options.id;
      EXPECT_EQ(m.fsm->Size(), n) << "node " << m.options.id;
    }
  }

  fs::path root_;
  std::vector<Member> members_;
};

void ExpectAllCommitted(const std::vector<ProposeResult>& results, std::size_t n) {
  ASSERT_EQ(results.size(), n);
  for (std::size_t k = 0; k < n; ++k) {
    ASSERT_EQ(results[k].status, ProposeStatus::kOk) << k << ": " << results[k].error;
    // The log holds them in the order they were proposed.
    if (k > 0) {
      ASSERT_LT(results[k - 1].id.index, results[k].id.index);
    }
  }
}

TEST_F(RaftClusterTest, ReplicatesInOneOrderFailsOverAndCatchesUp) {
  StartCluster();
  ASSERT_FALSE(HasFatalFailure());
  const auto started = Clock::now();
  const int leader = WaitForLeader(kElectionLimit);
  ASSERT_GE(leader, 0) << "no leader elected";
  std::cout << "[cluster] first leader ready after " << MillisSince(started) << " ms\n";
  const int follower = (leader + 1) % 3;
  EXPECT_EQ(members_[follower].node->Propose("x").get().status, ProposeStatus::kNotLeader);

  // 1000 entries, all in flight at once: every node applies them in the same order, with the
  // (term, index) the leader reported.
  auto t0 = Clock::now();
  const auto first = ProposeMany(leader, "a", 1000);
  const double pipelined_ms = MillisSince(t0);
  ExpectAllCommitted(first, 1000);
  ExpectSameHistory(1000);
  const auto history = members_[leader].fsm->Entries();
  for (std::size_t k = 0; k < 1000; ++k) {
    ASSERT_EQ(history[k].id, first[k].id) << k;
    ASSERT_EQ(history[k].payload, "a-" + std::to_string(k)) << k;
  }
  // One at a time: the latency of a single proposal (append + fsync + a majority's ack).
  t0 = Clock::now();
  for (int k = 0; k < 100; ++k) {
    ASSERT_EQ(members_[leader].node->Propose("b-" + std::to_string(k)).get().status,
              ProposeStatus::kOk);
  }
  const double one_by_one_ms = MillisSince(t0);
  std::cout << "[cluster] 1000 pipelined proposals: " << pipelined_ms << " ms ("
            << 1000 / (pipelined_ms / 1000) << "/s); 100 one at a time: " << one_by_one_ms / 100
            << " ms each\n";
  ExpectSameHistory(1100);

  // The leader stops: another is elected within the bound and takes proposals.
  const std::uint64_t old_term = members_[leader].node->Status().term;
  const std::uint64_t old_last = members_[leader].node->Status().last_index;
  t0 = Clock::now();
  members_[leader].node.reset();
  const int next = WaitForLeader(kElectionLimit);
  ASSERT_GE(next, 0) << "no new leader";
  ASSERT_NE(next, leader);
  std::cout << "[cluster] new leader ready " << MillisSince(t0) << " ms after the leader stopped"
            << " (election timeout " << kElectionTimeout.count() << " ms)\n";
  const auto second = ProposeMany(next, "c", 500);
  ExpectAllCommitted(second, 500);
  EXPECT_GT(second.front().id.term, old_term);
  EXPECT_GT(second.front().id.index, first.back().id.index);
  std::size_t total = 1600;
  ExpectSameHistory(total);
  // More, until the leader's log has dropped entries the stopped node lacks: a snapshot past
  // its last entry plus the 64 kept behind (snapshots every 256 entries; one still being
  // written delays the next, hence the loop).
  for (int round = 0; round < 20 && members_[next].node->Status().snapshot_index <= old_last + 64;
       ++round) {
    ExpectAllCommitted(ProposeMany(next, "e" + std::to_string(round), 100), 100);
    total += 100;
  }
  ASSERT_GT(members_[next].node->Status().snapshot_index, old_last + 64);

  // The old leader restarts on its directory (its last snapshot, then its log) and catches up:
  // from the leader's snapshot, or from AppendEntries that libuv's transport queued for it
  // while it was down (seen in traces: the queued messages keep their entries alive).
  Start(leader);
  ExpectSameHistory(total);
  EXPECT_TRUE(test::Eventually(
      [&] { return members_[leader].node->Status().leader_id == members_[next].options.id; },
      kCatchUpLimit));

  // The third member comes back with an empty directory: the leader's log no longer holds
  // what it lacks, so it must install the leader's snapshot. (The leader still counts on the
  // log it acknowledged before, so it ignores the node's rejections after the install until
  // install_snapshot_timeout; kInstallSnapshotTimeout here.)
  const int wiped = 3 - leader - next;
  members_[wiped].node.reset();
  fs::remove_all(members_[wiped].options.dir);
  fs::create_directories(members_[wiped].options.dir);
  t0 = Clock::now();
  Start(wiped);
  ExpectSameHistory(total);
  std::cout << "[cluster] wiped follower caught up in " << MillisSince(t0) << " ms\n";
  EXPECT_GT(members_[wiped].fsm->LargestRestore(), 0u);
  ExpectAllCommitted(ProposeMany(next, "d", 10), 10);
  ExpectSameHistory(total + 10);
}

// Every Raft connection, made or accepted, has Nagle's algorithm off (cluster/raft_nodelay.cpp:
// libraft's transport leaves it on, and a leader's back-to-back AppendEntries then wait for
// delayed ACKs, up to 40 ms). The three nodes are in this process: its own sockets are theirs.
// Without the leader probe, whose idle watch connections to the leader's Raft port never pass
// libraft's handshake (so never reach the wrapper) and carry no messages.
TEST_F(RaftClusterTest, RaftConnectionsHaveNagleOff) {
  leader_probe_ = false;
  StartCluster();
  ASSERT_FALSE(HasFatalFailure());
  const int leader = WaitForLeader(kElectionLimit);
  ASSERT_GE(leader, 0) << "no leader elected";
  ExpectAllCommitted(ProposeMany(leader, "n", 20), 20);
  std::vector<int> raft_ports;
  for (const Member& m : members_) {
    raft_ports.push_back(std::stoi(m.options.address.substr(m.options.address.rfind(':') + 1)));
  }
  const auto is_raft = [&](const sockaddr_in& a) {
    return std::find(raft_ports.begin(), raft_ports.end(), ntohs(a.sin_port)) != raft_ports.end();
  };
  int connections = 0;
  for (const auto& entry : fs::directory_iterator("/proc/self/fd")) {
    const int fd = std::stoi(entry.path().filename().string());
    sockaddr_in local{}, peer{};
    socklen_t len = sizeof(local);
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) != 0 ||
        local.sin_family != AF_INET) {
      continue;
    }
    len = sizeof(peer);
    if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &len) != 0) continue;  // listener
    if (!is_raft(local) && !is_raft(peer)) continue;
    int nodelay = 0;
    len = sizeof(nodelay);
    ASSERT_EQ(::getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &nodelay, &len), 0);
    EXPECT_EQ(nodelay, 1) << "fd " << fd << ": port " << ntohs(local.sin_port) << " to "
                          << ntohs(peer.sin_port);
    ++connections;
  }
  // The leader has reached both followers (and they it): at least its two outgoing
  // connections and the two ends accepted for them.
  EXPECT_GE(connections, 4);
}

// A leader whose followers are gone keeps libraft's RAFT_LEADER state for up to two election
// timeouts (it checks for a majority once per timeout), so that state alone must not let it
// answer reads; its lease has run out before it steps down.
TEST_F(RaftClusterTest, LeaderCutOffFromItsMajorityLosesItsLeaseBeforeItStepsDown) {
  StartCluster();
  ASSERT_FALSE(HasFatalFailure());
  const int leader = WaitForLeader(kElectionLimit);
  ASSERT_GE(leader, 0) << "no leader elected";
  RaftNode& node = *members_[leader].node;
  ASSERT_EQ(node.Propose("held").get().status, ProposeStatus::kOk);
  const auto lease_end = node.LeaseUntil();
  const auto t0 = Clock::now();
  EXPECT_GT(lease_end, t0);
  for (int i = 0; i < 3; ++i) {
    if (i != leader) members_[i].node.reset();
  }
  auto pending = node.Propose("unreachable");
  ASSERT_TRUE(test::Eventually([&] { return node.Status().role != NodeStatus::Role::kLeader; },
                               kElectionLimit));
  const auto stepped_down = Clock::now();
  std::cout << "[cluster] leader stepped down " << MillisSince(t0)
            << " ms after losing its followers\n";
  ASSERT_EQ(pending.wait_for(kElectionLimit), std::future_status::ready);
  EXPECT_NE(pending.get().status, ProposeStatus::kOk);
  EXPECT_EQ(node.LeaseUntil(), Clock::time_point{});  // dropped on stepping down
  // The lease (0.8 election timeouts from the start of the last committed round trip) ran
  // out before libraft stepped down, at least a timeout after that round trip's answers.
  EXPECT_LE(lease_end, t0 + kElectionTimeout * 8 / 10);
  EXPECT_LT(lease_end, stepped_down);
  std::cout << "[cluster] its lease had run out "
            << std::chrono::duration<double, std::milli>(stepped_down - lease_end).count()
            << " ms before that\n";
}

}  // namespace
}  // namespace latch::cluster
