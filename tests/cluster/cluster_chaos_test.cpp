// The cluster's safety claim under faults (issue 23: "a leader's death neither loses a lock nor
// grants it twice"), checked as the single server's chaos test checks it (lease_history.h):
// clients fight over a few hot keys with LOCK.ACQUIRE on whichever node leads, while the
// leader is killed with -9 and restarted on its Raft directory, or paused with SIGSTOP past
// an election and then resumed (a stale leader that still believes it leads), and a follower
// is killed now and then. Afterwards no two valid leases of one key may overlap, fencing
// tokens must rise in grant order, and the fenced resource must never accept a write below a
// token it saw. Three and five nodes; LATCH_CHAOS_SECONDS (default 12) per run.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cluster/latchd_cluster.h"
#include "durability/lease_history.h"
#include "support/raw_connection.h"

namespace latch::test {
namespace {

using std::chrono::milliseconds;
using ChaosClock = std::chrono::steady_clock;

// Lease TTLs that outlive a failover now and then (elections here take 0.3-1 s), so that the
// new leader meets leases granted by the old one.
constexpr std::int64_t kClusterChaosTtlMs = 1500;
constexpr int kClusterChaosKeys = 5;
constexpr int kClusterChaosClients = 24;

std::int64_t ClusterChaosNowUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(ChaosClock::now().time_since_epoch())
      .count();
}

int ClusterChaosSeconds() {
  const char* env = std::getenv("LATCH_CHAOS_SECONDS");
  return env != nullptr ? std::max(1, std::atoi(env)) : 12;
}

class ClusterChaos {
 public:
  explicit ClusterChaos(int nodes)
      : cluster_({"--raft-election-timeout", "300", "--raft-heartbeat-interval", "50"}, nodes),
        resource_(kClusterChaosKeys) {
    for (int i = 0; i < nodes; ++i) ports_.push_back(cluster_.port(i));
  }

  void Run(int seconds) {
    std::string error;
    ASSERT_TRUE(cluster_.Start(&error)) << error;
    ASSERT_NE(cluster_.WaitLeader(), -1) << cluster_.Logs();
    std::vector<std::thread> clients;
    for (int i = 0; i < kClusterChaosClients; ++i) clients.emplace_back([this, i] { Client(i); });
    Faults(seconds);
    stop_ = true;
    for (auto& t : clients) t.join();
  }

  HistoryVerdict Verdict() const { return CheckHistory(leases_); }
  std::size_t leases() const { return leases_.size(); }
  std::size_t kills() const { return kills_; }
  std::size_t pauses() const { return pauses_; }
  const FencedResource& resource() const { return resource_; }
  std::string Logs() const { return cluster_.Logs(); }

 private:
  // The node that answers ROLE as master, among those running: -1 while there is none.
  int CurrentLeader() const {
    for (int i = 0; i < cluster_.size(); ++i) {
      if (cluster_.alive(i) && Cmd(ports_[i], {"ROLE"}).starts_with("*3\r\n$6\r\nmaster\r\n")) {
        return i;
      }
    }
    return -1;
  }

  // Every 0.6-1.4 s one fault, in turn: kill -9 of the leader and a restart half a second later;
  // a SIGSTOP of the leader for 1-1.5 s (past an election) and SIGCONT; kill -9 of a follower
  // and its restart.
  void Faults(int seconds) {
    std::mt19937 rng(4242);
    const auto end = ChaosClock::now() + std::chrono::seconds(seconds);
    for (int round = 0; ChaosClock::now() < end; ++round) {
      std::this_thread::sleep_for(milliseconds(600 + rng() % 800));
      const int leader = CurrentLeader();
      if (leader == -1) continue;  // an election is under way: the next round
      int victim = leader;
      if (round % 3 == 2) victim = (leader + 1 + static_cast<int>(rng() % 2)) % cluster_.size();
      if (round % 3 == 1) {
        cluster_.Signal(victim, SIGSTOP);
        std::this_thread::sleep_for(milliseconds(1000 + rng() % 500));
        cluster_.Signal(victim, SIGCONT);
        ++pauses_;
        continue;
      }
      cluster_.Kill9(victim);
      ++kills_;
      std::this_thread::sleep_for(milliseconds(500));
      std::string error;
      if (!cluster_.StartNode(victim, &error)) {
        ADD_FAILURE() << "restart of node " << victim + 1 << " failed: " << error;
        return;
      }
    }
  }

  // One client: LOCK.ACQUIRE a random hot key on the node it believes leads; on a grant, work,
  // write to the fenced resource with the token, release. A refusal that names another leader
  // (READONLY, TRYAGAIN, no reply) sends it to the next node.
  void Client(int id) {
    std::mt19937 rng(static_cast<unsigned>(id) * 7919u + 11);
    RawConnection conn(milliseconds(1500));
    std::size_t node = static_cast<std::size_t>(id) % ports_.size();
    std::uint64_t n = 0;
    while (!stop_) {
      if (!conn.connected() && !conn.Connect(ports_[node])) {
        node = (node + 1) % ports_.size();
        std::this_thread::sleep_for(milliseconds(10));
        continue;
      }
      Lease l;
      l.key = static_cast<int>(rng() % kClusterChaosKeys);
      l.client = id;
      l.ttl_ms = kClusterChaosTtlMs;
      const std::string key = "cchaos:" + std::to_string(l.key);
      const std::string owner = "c" + std::to_string(id) + "-" + std::to_string(++n);
      l.sent_us = ClusterChaosNowUs();
      const std::string reply =
          conn.CommandArgs({"LOCK.ACQUIRE", key, owner, std::to_string(kClusterChaosTtlMs)});
      l.granted_us = ClusterChaosNowUs();
      if (reply.empty() || reply[0] != ':') {
        // An error (READONLY, TRYAGAIN) or no reply: look for the leader elsewhere. A nil
        // reply (held by another) is the leader's answer: try again there.
        if (reply.empty() || reply[0] == '-' || reply.starts_with("<no reply")) {
          conn.Close();
          node = (node + 1) % ports_.size();
        }
        std::this_thread::sleep_for(milliseconds(5 + rng() % 20));
        continue;
      }
      l.token = std::stoull(reply.substr(1));
      // One lease in eight outlives its TTL in the holder's hands (a stalled client).
      const bool stall = rng() % 8 == 0;
      std::this_thread::sleep_for(
          milliseconds(stall ? kClusterChaosTtlMs * 3 / 2 : 20 + rng() % 200));
      resource_.Write(l.key, l.token);
      l.released_us = ClusterChaosNowUs();
      Record(l);
      if (conn.CommandArgs({"LOCK.RELEASE", key, owner}).starts_with("<no reply")) conn.Close();
    }
  }

  void Record(const Lease& l) {
    std::lock_guard lock(mu_);
    leases_.push_back(l);
  }

  Cluster cluster_;
  std::vector<int> ports_;
  FencedResource resource_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::vector<Lease> leases_;
  std::atomic<std::size_t> kills_{0}, pauses_{0};
};

void CheckClusterChaos(int nodes) {
  ClusterChaos chaos(nodes);
  chaos.Run(ClusterChaosSeconds());
  if (::testing::Test::HasFatalFailure()) return;
  const HistoryVerdict v = chaos.Verdict();
  std::printf(
      "[cluster-chaos] nodes=%d leases=%zu overlaps=%zu token_order=%zu "
      "fenced_refusals=%zu accepted_below_seen=%zu kills=%zu pauses=%zu\n",
      nodes, v.leases, v.overlaps, v.token_order, chaos.resource().refused(),
      chaos.resource().accepted_below_seen(), chaos.kills(), chaos.pauses());
  EXPECT_GT(chaos.kills(), 0u);
  // Enough grants to have met the faults (a loaded machine gave 48 in 12 s; 140-180 quiet).
  EXPECT_GT(v.leases, 20u) << chaos.Logs();
  EXPECT_EQ(v.overlaps, 0u) << v.first_overlap;
  EXPECT_EQ(v.token_order, 0u);
  EXPECT_EQ(chaos.resource().accepted_below_seen(), 0u);
}

TEST(ClusterChaosTest, ThreeNodesNeverGrantAHeldLockAcrossLeaderFaults) { CheckClusterChaos(3); }

TEST(ClusterChaosTest, FiveNodesNeverGrantAHeldLockAcrossLeaderFaults) { CheckClusterChaos(5); }

}  // namespace
}  // namespace latch::test
