// The chaos test: many clients fight over a few hot keys with short TTLs against a real latchd
// that is killed with -9 and restarted, paused with SIGSTOP/SIGCONT, and whose clients drop
// their connections; then the recorded history is checked (lease_history.h).
//
// Required: no overlap and no token out of order with appendfsync always, and with
// lock-restart-delay >= the TTL; and with neither, the checker must find overlaps (it can see
// them). Each mode runs LATCH_CHAOS_SECONDS (default 12) seconds; counts are printed.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <random>
#include <thread>
#include <vector>

#include "durability/latchd_child.h"
#include "durability/lease_history.h"
#include "support/raw_connection.h"

namespace latch::test {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

constexpr int kKeys = 5;
constexpr int kClients = 40;
constexpr std::int64_t kTtlMs = 500;

std::int64_t NowUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(Clock::now().time_since_epoch())
      .count();
}

int ChaosSeconds() {
  const char* env = std::getenv("LATCH_CHAOS_SECONDS");
  return env != nullptr ? std::max(1, std::atoi(env)) : 12;
}

struct Counts {
  HistoryVerdict verdict;
  std::size_t kills = 0, pauses = 0, drops = 0;
  std::size_t fenced_refusals = 0, fenced_accepted_below = 0;
};

class Chaos {
 public:
  explicit Chaos(std::vector<std::string> directives) : server_(std::move(directives)) {}

  Counts Run(int seconds) {
    if (!server_.Start()) {
      ADD_FAILURE() << server_.Log();
      return {};
    }
    std::vector<std::thread> clients;
    for (int i = 0; i < kClients; ++i) clients.emplace_back([this, i] { Client(i); });
    Faults(seconds);
    stop_ = true;
    for (auto& t : clients) t.join();
    server_.Stop();
    Counts c;
    c.verdict = CheckHistory(leases_);
    c.kills = kills_;
    c.pauses = pauses_;
    c.drops = drops_;
    c.fenced_refusals = resource_.refused();
    c.fenced_accepted_below = resource_.accepted_below_seen();
    return c;
  }

 private:
  // Every 1-2.5 s: kill -9 and an immediate restart, every third time a 200-600 ms SIGSTOP.
  void Faults(int seconds) {
    std::mt19937 rng(12345);
    const auto end = Clock::now() + std::chrono::seconds(seconds);
    for (int round = 1; Clock::now() < end; ++round) {
      std::this_thread::sleep_for(milliseconds(1000 + rng() % 1500));
      if (round % 3 == 0) {
        server_.Pause();
        std::this_thread::sleep_for(milliseconds(200 + rng() % 400));
        server_.Resume();
        ++pauses_;
      } else {
        server_.Kill9();
        ++kills_;
        if (!server_.Start()) {
          ADD_FAILURE() << "restart failed\n" << server_.Log();
          return;
        }
      }
    }
  }

  void Record(const Lease& l) {
    std::lock_guard lock(mu_);
    leases_.push_back(l);
  }

  // One client: acquire a random hot key; on a grant, work 50-350 ms (one time in ten stall
  // past the TTL), write to the fenced resource with the token, release.
  void Client(int id) {
    std::mt19937 rng(static_cast<unsigned>(id) * 7919u + 1);
    RawConnection conn(milliseconds(1500));
    std::uint64_t n = 0;
    while (!stop_) {
      if (!conn.connected() && !conn.Connect(server_.port())) {
        std::this_thread::sleep_for(milliseconds(10));
        continue;
      }
      Lease l;
      l.key = static_cast<int>(rng() % kKeys);
      l.client = id;
      l.ttl_ms = kTtlMs;
      const std::string key = "chaos:" + std::to_string(l.key);
      const std::string owner = "c" + std::to_string(id) + "-" + std::to_string(++n);
      const std::vector<std::string> acquire = {"LOCK.ACQUIRE", key, owner, std::to_string(kTtlMs)};
      l.sent_us = NowUs();
      if (rng() % 200 == 0) {  // a dropped connection right after the request
        conn.Send(RawConnection::Encode(acquire));
        conn.Close();
        ++drops_;
        continue;
      }
      const std::string reply = conn.CommandArgs(acquire);
      l.granted_us = NowUs();
      if (reply.empty() || reply[0] != ':') {
        if (reply.rfind("<no reply", 0) == 0) conn.Close();
        std::this_thread::sleep_for(milliseconds(5 + rng() % 20));
        continue;
      }
      l.token = std::stoull(reply.substr(1));
      const bool stall = rng() % 10 == 0;
      std::this_thread::sleep_for(milliseconds(stall ? kTtlMs * 3 / 2 : 50 + rng() % 300));
      resource_.Write(l.key, l.token);
      l.released_us = NowUs();
      Record(l);
      if (conn.CommandArgs({"LOCK.RELEASE", key, owner}).rfind("<no reply", 0) == 0) conn.Close();
    }
  }

  LatchdChild server_;
  FencedResource resource_{kKeys};
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::vector<Lease> leases_;
  std::atomic<std::size_t> kills_{0}, pauses_{0}, drops_{0};
};

void Print(const char* mode, const Counts& c) {
  std::printf(
      "[chaos] %-28s leases=%zu overlaps=%zu token_order=%zu fenced_refusals=%zu "
      "accepted_below_seen=%zu kills=%zu pauses=%zu drops=%zu\n",
      mode, c.verdict.leases, c.verdict.overlaps, c.verdict.token_order, c.fenced_refusals,
      c.fenced_accepted_below, c.kills, c.pauses, c.drops);
}

TEST(ChaosTest, AppendfsyncAlwaysNeverGrantsAHeldLock) {
  Chaos chaos({"--appendonly", "yes", "--appendfsync", "always"});
  const Counts c = chaos.Run(ChaosSeconds());
  Print("appendfsync always", c);
  EXPECT_GT(c.kills, 0u);
  EXPECT_GT(c.verdict.leases, 50u);
  EXPECT_EQ(c.verdict.overlaps, 0u) << c.verdict.first_overlap;
  EXPECT_EQ(c.verdict.token_order, 0u);
  EXPECT_EQ(c.fenced_accepted_below, 0u);
}

TEST(ChaosTest, LockRestartDelayOfOneTtlNeverGrantsAHeldLock) {
  Chaos chaos({"--lock-restart-delay", std::to_string(kTtlMs)});
  const Counts c = chaos.Run(ChaosSeconds());
  Print("lock-restart-delay = TTL", c);
  EXPECT_GT(c.kills, 0u);
  EXPECT_GT(c.verdict.leases, 50u);
  EXPECT_EQ(c.verdict.overlaps, 0u) << c.verdict.first_overlap;
  EXPECT_EQ(c.verdict.token_order, 0u);
  EXPECT_EQ(c.fenced_accepted_below, 0u);
}

// everysec: a reply goes out after its records were write()n (only the fdatasync waits for
// the next second), so against kill -9 it promises what always does (a machine crash is
// another matter). Half the time of the others: the always run covers the same paths.
TEST(ChaosTest, AppendfsyncEverysecNeverGrantsAHeldLockAfterKill9) {
  Chaos chaos({"--appendonly", "yes", "--appendfsync", "everysec"});
  const Counts c = chaos.Run(std::max(1, ChaosSeconds() / 2));
  Print("appendfsync everysec", c);
  EXPECT_GT(c.kills, 0u);
  EXPECT_GT(c.verdict.leases, 25u);
  EXPECT_EQ(c.verdict.overlaps, 0u) << c.verdict.first_overlap;
  EXPECT_EQ(c.verdict.token_order, 0u);
  EXPECT_EQ(c.fenced_accepted_below, 0u);
}

// Proves the checker sees what it checks for: no journal, no delay, and the crashes do let a
// second client in while the first still holds a valid lease.
TEST(ChaosTest, WithoutJournalOrDelayTheCheckerFindsOverlaps) {
  Chaos chaos({});
  const Counts c = chaos.Run(ChaosSeconds());
  Print("no journal, no delay", c);
  EXPECT_GT(c.kills, 0u);
  EXPECT_GT(c.verdict.overlaps, 0u) << "the checker must see the unsafe restarts";
  EXPECT_EQ(c.fenced_accepted_below, 0u);
}

// The checker itself, on histories whose answer is known.
TEST(LeaseHistoryTest, FindsOverlapsAndTokenDisorderOnlyWhereThere) {
  auto lease = [](int client, std::uint64_t token, std::int64_t sent_ms, std::int64_t got_ms,
                  std::int64_t released_ms) {
    Lease l;
    l.key = 0;
    l.client = client;
    l.token = token;
    l.sent_us = sent_ms * 1000;
    l.granted_us = got_ms * 1000;
    l.released_us = released_ms * 1000;
    l.ttl_ms = 100;
    return l;
  };
  // Back to back: released before the next grant.
  HistoryVerdict v = CheckHistory({lease(1, 10, 0, 1, 50), lease(2, 11, 40, 51, 90)});
  EXPECT_EQ(v.overlaps, 0u);
  EXPECT_EQ(v.token_order, 0u);
  // The first never released (crash): valid until 0 + 100 - 3 = 97 ms; a grant at 60 overlaps.
  v = CheckHistory({lease(1, 10, 0, 1, 0), lease(2, 11, 55, 60, 80)});
  EXPECT_EQ(v.overlaps, 1u);
  // ... but not a grant at 98 ms.
  v = CheckHistory({lease(1, 10, 0, 1, 0), lease(2, 11, 95, 98, 120)});
  EXPECT_EQ(v.overlaps, 0u);
  // A later grant with a lower token.
  v = CheckHistory({lease(1, 10, 0, 1, 5), lease(2, 9, 10, 12, 20)});
  EXPECT_EQ(v.token_order, 1u);
  FencedResource r(1);
  EXPECT_TRUE(r.Write(0, 5));
  EXPECT_FALSE(r.Write(0, 4));
  EXPECT_TRUE(r.Write(0, 5));
  EXPECT_EQ(r.refused(), 1u);
  EXPECT_EQ(r.accepted_below_seen(), 0u);
}

}  // namespace
}  // namespace latch::test
