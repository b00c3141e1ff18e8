// One command, one Raft entry (docs/CLUSTER.md, "What a log entry is"): an EXEC of 200 SETs, a
// DEL of 200 keys (which releases its shards one by one) and a script writing 200 keys, run
// by concurrent clients on the leader beside single-key writers, are never seen half-applied
// on a follower. Followers relay their clients' reads to the leader, so the reader asks the
// follower's own keyspace with TEST.LOCAL-EXISTS (every shard held: one state between two
// applied entries). With group-commit entries cut wherever the proposer's pass fell, the
// reader saw mixed counts within the first second.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cluster/latchd_cluster.h"
#include "support/eventually.h"
#include "support/raw_connection.h"

namespace latch::test {
namespace {

using std::chrono::milliseconds;
using SteadyClock = std::chrono::steady_clock;

constexpr int kEntryKeys = 200;
constexpr auto kEntryLoad = milliseconds(4000);
constexpr int kEntryMaxRounds = 100000;  // per writer: the load is bounded in count as well as time

std::vector<std::string> EntryKeys(const std::string& prefix) {
  std::vector<std::string> keys;
  for (int i = 0; i < kEntryKeys; ++i) keys.push_back(prefix + std::to_string(i));
  return keys;
}

// Collects the first failure of any thread (gtest's assertions belong to the main thread).
class EntryFailures {
 public:
  void Add(const std::string& what) {
    std::lock_guard lock(mu_);
    if (first_.empty()) first_ = what;
    ++count_;
  }
  int count() const {
    std::lock_guard lock(mu_);
    return count_;
  }
  std::string first() const {
    std::lock_guard lock(mu_);
    return first_;
  }

 private:
  mutable std::mutex mu_;
  std::string first_;
  int count_ = 0;
};

// MULTI, a SET of every key, EXEC (one pipelined write): true when EXEC ran all of them.
bool EntryExecSetAll(RawConnection& conn, const std::vector<std::string>& keys,
                     const std::string& v, std::string* reply) {
  std::string req = RawConnection::Encode({"MULTI"});
  for (const std::string& k : keys) req += RawConnection::Encode({"SET", k, v});
  req += RawConnection::Encode({"EXEC"});
  if (!conn.Send(req)) return false;
  for (std::size_t i = 0; i < keys.size() + 1; ++i) {
    auto r = conn.ReadReply();
    if (!r) return false;
  }
  auto exec = conn.ReadReply();
  if (!exec) return false;
  *reply = exec->substr(0, 64);
  return exec->starts_with("*" + std::to_string(keys.size()) + "\r\n+OK\r\n");
}

std::vector<std::string> EntryArgs(std::vector<std::string> head,
                                   const std::vector<std::string>& tail) {
  head.insert(head.end(), tail.begin(), tail.end());
  return head;
}

const std::string kEntrySetScript =
    "for i = 1, #KEYS do redis.call('SET', KEYS[i], ARGV[1]) end return 1";
const std::string kEntryDelScript = "for i = 1, #KEYS do redis.call('DEL', KEYS[i]) end return 1";

struct EntrySeen {
  std::atomic<int> reads{0}, full{0}, empty{0};
};

TEST(LatchdClusterEntry, MultiKeyCommandsAreNeverSeenHalfAppliedOnAFollower) {
  Cluster c({"--enable-test-commands", "yes"});
  std::string error;
  ASSERT_TRUE(c.Start(&error)) << error;
  const int leader = c.WaitLeader();
  ASSERT_NE(leader, -1) << c.Logs();
  const int follower = (leader + 1) % c.size();
  const std::vector<std::string> exec_keys = EntryKeys("e:"), script_keys = EntryKeys("s:");

  std::atomic<bool> stop{false};
  EntryFailures failures;
  std::atomic<int> exec_rounds{0}, script_rounds{0}, single_writes{0};
  std::vector<std::thread> writers;
  // Two EXEC writers: all 200 keys set in one EXEC, then deleted by one DEL of 200 keys.
  for (int w = 0; w < 2; ++w) {
    writers.emplace_back([&, w] {
      RawConnection conn(c.port(leader));
      const std::vector<std::string> del = EntryArgs({"DEL"}, exec_keys);
      for (int round = 0; round < kEntryMaxRounds && !stop; ++round) {
        std::string reply;
        if (!EntryExecSetAll(conn, exec_keys, "w" + std::to_string(w), &reply)) {
          return failures.Add("EXEC writer: " + reply + conn.error());
        }
        const std::string d = conn.CommandArgs(del);
        if (IntegerOf(d) < 0) return failures.Add("DEL writer: " + d);
        ++exec_rounds;
      }
    });
  }
  // Two script writers: 200 keys set by one EVAL, then deleted by another.
  for (int w = 0; w < 2; ++w) {
    writers.emplace_back([&, w] {
      RawConnection conn(c.port(leader));
      const std::vector<std::string> keys = EntryArgs({std::to_string(kEntryKeys)}, script_keys);
      for (int round = 0; round < kEntryMaxRounds && !stop; ++round) {
        const std::string set =
            conn.CommandArgs(EntryArgs(EntryArgs({"EVAL", kEntrySetScript}, keys), {"v"}));
        if (set != ":1\r\n") return failures.Add("EVAL set: " + set);
        const std::string del = conn.CommandArgs(EntryArgs({"EVAL", kEntryDelScript}, keys));
        if (del != ":1\r\n") return failures.Add("EVAL del: " + del);
        ++script_rounds;
      }
    });
  }
  // Two writers of single keys, whose records interleave with the others'.
  for (int w = 0; w < 2; ++w) {
    writers.emplace_back([&, w] {
      RawConnection conn(c.port(leader));
      for (int round = 0; round < kEntryMaxRounds && !stop; ++round) {
        const std::string r =
            conn.Command("SET", "n:" + std::to_string(w) + ":" + std::to_string(round % 50), "x");
        if (r != "+OK\r\n") return failures.Add("SET writer: " + r);
        ++single_writes;
      }
    });
  }

  // The reader, on the follower's own keyspace: each group is all there or not at all.
  EntrySeen exec_seen, script_seen;
  const auto count = [&](RawConnection& conn, const std::vector<std::string>& keys, EntrySeen& seen,
                         const char* what) {
    const std::string r = conn.CommandArgs(EntryArgs({"TEST.LOCAL-EXISTS"}, keys));
    const std::int64_t n = IntegerOf(r);
    ++seen.reads;
    if (n == kEntryKeys) {
      ++seen.full;
    } else if (n == 0) {
      ++seen.empty;
    } else {
      failures.Add(std::string(what) + " seen half-applied on the follower: " + r);
    }
  };
  {
    RawConnection conn(c.port(follower));
    const auto until = SteadyClock::now() + kEntryLoad;
    while (SteadyClock::now() < until && failures.count() < 5) {
      count(conn, exec_keys, exec_seen, "EXEC/DEL");
      count(conn, script_keys, script_seen, "script");
    }
  }
  stop = true;
  for (auto& t : writers) t.join();
  EXPECT_EQ(failures.count(), 0) << failures.first();
  std::printf(
      "rounds: %d EXEC+DEL, %d scripts, %d single SETs; follower reads: EXEC keys %d "
      "(%d full, %d empty), script keys %d (%d full, %d empty)\n",
      exec_rounds.load(), script_rounds.load(), single_writes.load(), exec_seen.reads.load(),
      exec_seen.full.load(), exec_seen.empty.load(), script_seen.reads.load(),
      script_seen.full.load(), script_seen.empty.load());
  // Not vacuous: the writers ran and the reader saw both states of each group change.
  EXPECT_GT(exec_rounds.load(), 10);
  EXPECT_GT(script_rounds.load(), 10);
  EXPECT_GT(exec_seen.full.load(), 0);
  EXPECT_GT(exec_seen.empty.load(), 0);
  EXPECT_GT(script_seen.full.load(), 0);
  EXPECT_GT(script_seen.empty.load(), 0);

  // Once the follower applied everything, its keyspace is the leader's.
  // A write after the load: once the follower holds it, it applied every entry before it (the
  // status's commit index can lag a reply by one loop iteration of the leader's Raft thread).
  ASSERT_EQ(Cmd(c.port(leader), {"SET", "entry:fence", "1"}), "+OK\r\n");
  ASSERT_TRUE(Eventually(
      [&] {
        return Cmd(c.port(follower), {"TEST.LOCAL-EXISTS", "entry:fence"}) == ":1\r\n";
      },
      milliseconds(10000)));
  for (const auto* keys : {&exec_keys, &script_keys}) {
    EXPECT_EQ(Cmd(c.port(follower), EntryArgs({"TEST.LOCAL-EXISTS"}, *keys)),
              Cmd(c.port(leader), EntryArgs({"TEST.LOCAL-EXISTS"}, *keys)));
  }
}

}  // namespace
}  // namespace latch::test
