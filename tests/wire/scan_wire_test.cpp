// SCAN over real sockets (issue 24): a call costs what it returns, not its shard's size (a
// full SCAN used to copy and sort a whole shard per call: quadratic), and every key present
// for the whole scan is returned, once, while other clients add and delete keys (the shards'
// tables grow and move entries between calls).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "support/embedded_server.h"
#include "support/raw_connection.h"

namespace latch::test {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// SET k<first>..k<first+n-1> (prefix given) v, pipelined in batches.
void Fill(RawConnection& c, const std::string& prefix, int first, int n) {
  constexpr int kBatch = 2000;
  for (int base = first; base < first + n; base += kBatch) {
    std::string out;
    const int end = std::min(base + kBatch, first + n);
    for (int i = base; i < end; ++i)
      out += RawConnection::Encode({"SET", prefix + std::to_string(i), "v"});
    ASSERT_TRUE(c.Send(out));
    for (int i = base; i < end; ++i) ASSERT_EQ(c.ReadReply(), "+OK\r\n");
  }
}

// The cursor and the keys of a SCAN reply ("*2\r\n$n\r\ncursor\r\n*m\r\n$..\r\nkey\r\n...").
bool ParseScan(const std::string& reply, std::string* cursor, std::vector<std::string>* keys) {
  std::size_t at = reply.find("\r\n$");
  if (reply.rfind("*2\r\n", 0) != 0 || at == std::string::npos) return false;
  at = reply.find("\r\n", at + 3) + 2;
  const std::size_t end = reply.find("\r\n", at);
  *cursor = reply.substr(at, end - at);
  at = reply.find("\r\n", end + 2) + 2;  // past "*m"
  keys->clear();
  while (at < reply.size()) {
    const std::size_t len_end = reply.find("\r\n", at);
    const std::size_t len = std::stoul(reply.substr(at + 1, len_end - at - 1));
    keys->push_back(reply.substr(len_end + 2, len));
    at = len_end + 2 + len + 2;
  }
  return true;
}

// Two shards of 100,000 keys, the first 200 calls within the first: before, each call of
// SCAN COUNT 10 hashed, copied and sorted all of that shard's keys from the cursor on (a
// tenth of a second and more in a Debug build); 200 calls now take a few milliseconds. The
// bound leaves two orders of magnitude for a loaded machine. (Not one shard: there the old
// code ended the scan after the first call, its last-shard bug.)
TEST(ScanWire, CallCostDoesNotGrowWithTheShard) {
  Options o = EmbeddedServer::DefaultOptions();
  o.shards = 2;
  EmbeddedServer server(o);
  RawConnection c(server.port(), 60s);
  Fill(c, "k", 0, 200000);
  std::string cursor = "0";
  std::vector<std::string> keys;
  const auto deadline = Clock::now() + 10s;
  int calls = 0;
  for (; calls < 200 && Clock::now() < deadline; ++calls) {
    ASSERT_TRUE(ParseScan(c.Command("SCAN", cursor, "COUNT", "10"), &cursor, &keys));
    ASSERT_NE(cursor, "0");
    ASSERT_GE(keys.size(), 1u);
  }
  EXPECT_EQ(calls, 200) << "200 calls of SCAN COUNT 10 in a shard of 100,000 keys did not "
                           "finish within 10 s";
}

// Writers add and delete keys of their own while a client scans: every key present for the
// whole scan is returned exactly once, and the scan ends. Bounded: the writers stop after a
// fixed number of rounds or when the scan ends, the scan after a fixed number of calls or
// 180 s (a few seconds in a Debug build; the quadratic scan of before took over 20 minutes).
TEST(ScanWire, KeysPresentThroughoutAreReturnedOnceUnderConcurrentWrites) {
  EmbeddedServer server;
  constexpr int kStable = 20000;
  {
    RawConnection c(server.port(), 30s);
    Fill(c, "stable:", 0, kStable);
  }
  std::atomic<bool> scan_done{false};
  std::atomic<int> written{0};
  std::vector<std::thread> writers;
  for (int w = 0; w < 2; ++w) {
    writers.emplace_back([&, w] {
      RawConnection c(server.port(), 30s);
      const std::string prefix = "churn" + std::to_string(w) + ":";
      // Each round adds 500 keys and deletes the 250 oldest still there: the tables grow
      // through the scan, and deletes shift entries back.
      int added = 0, deleted = 0;
      for (int round = 0; round < 200 && !scan_done; ++round) {
        std::string out;
        for (int i = 0; i < 500; ++i) {
          out += RawConnection::Encode({"SET", prefix + std::to_string(added++), "v"});
        }
        for (int i = 0; i < 250; ++i) {
          out += RawConnection::Encode({"DEL", prefix + std::to_string(deleted++)});
        }
        if (!c.Send(out)) return;
        for (int i = 0; i < 750; ++i) {
          if (!c.ReadReply()) return;
        }
        written += 750;
      }
    });
  }
  std::map<std::string, int> seen;
  int calls = 0;
  std::string failure;  // the scan's failure; the writers are joined before any assertion
  {
    RawConnection c(server.port(), 30s);
    std::string cursor = "0";
    std::vector<std::string> keys;
    const auto deadline = Clock::now() + 180s;
    do {
      if (++calls >= 200000) failure = "the scan does not end";
      if (Clock::now() > deadline) failure = "the scan did not end within 180 s";
      // Small counts so that the scan spans the writers' rounds.
      const std::string reply = c.Command("SCAN", cursor, "COUNT", std::to_string(1 + calls % 7));
      if (failure.empty() && !ParseScan(reply, &cursor, &keys)) failure = "bad reply " + reply;
      for (const std::string& k : keys) ++seen[k];
    } while (failure.empty() && cursor != "0");
  }
  scan_done = true;
  for (std::thread& t : writers) t.join();
  ASSERT_EQ(failure, "") << "after " << calls << " calls";
  EXPECT_GT(written.load(), 0);
  for (int i = 0; i < kStable; ++i) {
    ASSERT_EQ(seen["stable:" + std::to_string(i)], 1)
        << "stable:" << i << " after " << calls << " calls";
  }
  for (const auto& [key, n] : seen) ASSERT_EQ(n, 1) << key;
}

}  // namespace
}  // namespace latch::test
