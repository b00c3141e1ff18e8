// The robustness suite (issue 16, "Done when"): each attack runs against a fresh latchd
// process while RobustProbe, a separate well-behaved lock client, keeps timing its
// requests. Every test then checks that the probe saw no failure and a p99 under 100 ms
// throughout, that latchd is alive, and that its RSS came back near where it started.
// ScriptLoop lets the probe take BUSY as an answer while the script runs.
// Bounded: about a minute and a half in all on a loaded two-core machine (ctest -L robust).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "robust/fuzz_inputs.h"
#include "robust/robust_probe.h"
#include "support/process_stats.h"
#include "support/raw_connection.h"
#include "support/server_process.h"
#include "support/tcp_socket.h"
#include "support/wire_expect.h"

namespace latch::test {
namespace {

using namespace std::chrono_literals;

constexpr double kP99BoundMs = 100;
constexpr std::int64_t kRssSlack = 16 << 20;  // what "comes back" allows for

class Robust : public ::testing::Test {
 protected:
  void SetUp() override {
    latchd_ = std::make_unique<ServerProcess>("latchd", [](int port) {
      return std::vector<std::string>{LatchdUnderTest(),
                                      "--port",
                                      std::to_string(port),
                                      "--bind",
                                      "127.0.0.1",
                                      "--io-threads",
                                      "2",
                                      "--client-output-buffer-limit",
                                      "normal",
                                      "32mb",
                                      "8mb",
                                      "10"};
    });
    ASSERT_TRUE(latchd_->ok()) << latchd_->error();
    admin_ = std::make_unique<RawConnection>(latchd_->port(), 10s);
    probe_ = std::make_unique<RobustProbe>(latchd_->port());
    // The baseline once the probe's connection and its 64 keys exist (64 rounds of 4 steps).
    ASSERT_TRUE(Eventually([&] { return probe_->samples() >= 64 * 4; }, 10s));
    baseline_rss_ = RssBytes(latchd_->pid());
  }

  void TearDown() override {
    if (!latchd_ || !latchd_->ok()) return;
    probe_->Stop();
    EXPECT_TRUE(ProcessAlive(latchd_->pid())) << latchd_->Log();
    EXPECT_EQ(probe_->failures(), 0) << "first: " << probe_->first_failure();
    EXPECT_GT(probe_->samples(), 100u);
    EXPECT_LT(probe_->PercentileMs(99), kP99BoundMs)
        << "p50 " << probe_->PercentileMs(50) << " ms, max " << probe_->MaxMs() << " ms over "
        << probe_->samples() << " requests";
    std::int64_t rss = 0;
    Eventually([&] { return (rss = RssBytes(latchd_->pid())) < baseline_rss_ + kRssSlack; },
               5000ms);
    EXPECT_LT(rss, baseline_rss_ + kRssSlack) << "RSS " << baseline_rss_ << " -> " << rss;
    RecordProperty("p99_ms", std::to_string(probe_->PercentileMs(99)));
    std::printf(
        "[ robust   ] p50 %.2f ms, p99 %.2f ms, max %.2f ms over %zu requests; RSS %lld -> %lld\n",
        probe_->PercentileMs(50), probe_->PercentileMs(99), probe_->MaxMs(), probe_->samples(),
        static_cast<long long>(baseline_rss_), static_cast<long long>(rss));
  }

  int port() const { return latchd_->port(); }

  std::unique_ptr<ServerProcess> latchd_;
  std::unique_ptr<RawConnection> admin_;
  std::unique_ptr<RobustProbe> probe_;
  std::int64_t baseline_rss_ = 0;
};

// Clients declaring 512 MB bulks and sending a trickle: memory follows the bytes sent.
TEST_F(Robust, HugeDeclaredBulks) {
  std::vector<TcpSocket> clients;
  for (int i = 0; i < 16; ++i) {
    clients.emplace_back(port());
    ASSERT_TRUE(clients.back().SendAll("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$536870912\r\n"));
  }
  const std::string trickle(4096, 'x');
  for (int round = 0; round < 20; ++round) {  // 80 KB each over about two seconds
    for (TcpSocket& c : clients) ASSERT_TRUE(c.SendAll(trickle));
    std::this_thread::sleep_for(100ms);
  }
  const std::int64_t rss = RssBytes(latchd_->pid());
  EXPECT_LT(rss, baseline_rss_ + kRssSlack) << "16 clients sent 1.3 MB in all";
}

// Clients pipelining GETs of a 4 MB value and never reading: each is closed at the
// 32 MB limit instead of growing gigabytes of replies.
TEST_F(Robust, NonReadingClientsWithBigReplies) {
  ASSERT_EQ(admin_->Command("SET", "big", std::string(4 << 20, 'b')), "+OK\r\n");
  std::string gets;
  for (int i = 0; i < 200; ++i) gets += RawConnection::Encode({"GET", "big"});
  std::vector<TcpSocket> hogs;
  for (int i = 0; i < 4; ++i) {
    hogs.emplace_back(port(), 4096);
    ASSERT_TRUE(hogs.back().SendAll(gets));
  }
  for (TcpSocket& h : hogs) EXPECT_TRUE(h.WaitClosed(10s)) << "a hog was never closed";
  ASSERT_EQ(admin_->Command("DEL", "big"), ":1\r\n");
}

// Waves of connections opened, used once and closed (4,000 in all, as a fleet of clients
// reconnecting after a network blip): the server keeps up, and their buffers do not stay
// behind.
TEST_F(Robust, ConnectionStorm) {
  const std::string ping = RawConnection::Encode({"PING"});
  for (int wave = 0; wave < 8; ++wave) {
    std::vector<TcpSocket> storm;
    storm.reserve(500);
    for (int i = 0; i < 500; ++i) {
      storm.emplace_back(port());
      ASSERT_TRUE(storm.back().ok());
      ASSERT_TRUE(storm.back().SendAll(ping));
    }
    for (TcpSocket& s : storm) {
      std::string reply;
      ASSERT_GT(s.ReadSome(&reply, 64, 5000ms), 0);
    }
    std::this_thread::sleep_for(50ms);
  }
}

// More clients than maxclients: the extras are refused with Redis's error at once, and
// nobody already connected notices.
TEST_F(Robust, TooManyClients) {
  ASSERT_EQ(admin_->Command("CONFIG", "SET", "maxclients", "40"), "+OK\r\n");
  std::vector<RawConnection> clients;
  int refused = 0;
  for (int i = 0; i < 120; ++i) {
    clients.emplace_back(port(), 2000ms);
    const std::string reply = clients.back().Command("PING");
    if (reply == "-ERR max number of clients reached\r\n") {
      ++refused;
    } else {
      EXPECT_EQ(reply, "+PONG\r\n");
    }
  }
  EXPECT_GE(refused, 80);
  clients.clear();
  EXPECT_EQ(admin_->Command("CONFIG", "SET", "maxclients", "10000"), "+OK\r\n");
}

// Random and mutated requests over real sockets, 16 connections at a time: every input is
// answered, left waiting for more bytes, or closed; none takes the server down.
TEST_F(Robust, RandomAndMutatedInputFuzz) {
  std::mt19937_64 rng(20261201);
  constexpr int kInputs = 3000;
  constexpr int kParallel = 16;
  for (int done = 0; done < kInputs; done += kParallel) {
    std::vector<TcpSocket> conns;
    for (int i = 0; i < kParallel; ++i) {
      conns.emplace_back(port());
      ASSERT_TRUE(conns.back().ok());
      conns.back().SendAll(NextFuzzInput(rng), 500ms);  // a closed socket is an answer too
    }
    for (TcpSocket& c : conns) {
      std::string sink;
      c.ReadSome(&sink, 1 << 16, 20ms);
    }
  }
  RawConnection after(port());
  EXPECT_EQ(after.Command("PING"), "+PONG\r\n");
}

constexpr char kBusy[] =
    "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN "
    "NOSAVE.\r\n";

// One client runs EVAL "while true do end" 0. Past busy-reply-threshold (200 ms here) the
// probe, on the other worker, is answered BUSY at once (its usual p99 bound holds), PING
// too as in Redis 7.0; SCRIPT KILL ends the loop and every reply is normal again.
TEST_F(Robust, ScriptLoop) {
  ASSERT_EQ(admin_->Command("CONFIG", "SET", "busy-reply-threshold", "200"), "+OK\r\n");
  probe_->set_busy_is_answer(true);
  // The server hands accepted connections to its two workers in turn: `runner`, accepted
  // right after the probe, is on the other worker, and `other` on the probe's. A client on
  // the script's own worker waits for the script, as it would on Redis's only thread.
  RawConnection runner(port(), 10s);
  RawConnection other(port(), 2s);
  ASSERT_TRUE(runner.Send(RawConnection::Encode({"EVAL", "while true do end", "0"})));
  ASSERT_TRUE(Eventually([&] { return probe_->busy_replies() > 0; }, 1000ms))
      << "the probe saw no BUSY within busy-reply-threshold plus 800 ms";
  const int busy_at_start = probe_->busy_replies();
  // About two seconds of a frozen keyspace (20 checks, 100 ms apart), and on until the probe
  // has been answered BUSY 50 more times (bounded: 30 s).
  const auto give_up = std::chrono::steady_clock::now() + 30s;
  for (int i = 0; (i < 20 || probe_->busy_replies() - busy_at_start < 50) &&
                  std::chrono::steady_clock::now() < give_up;
       ++i) {
    // Answered while the script still runs (it never ends before the SCRIPT KILL below), so
    // not after waiting for it. (A time bound here measured the machine: 136 ms for the two
    // round trips once at load 10, beside a spinning script.)
    EXPECT_EQ(other.Command("PING"), kBusy);
    EXPECT_EQ(other.Command("GET", "k"), kBusy);
    std::this_thread::sleep_for(100ms);  // pacing the checks, not a wait for an effect
  }
  EXPECT_GE(probe_->busy_replies() - busy_at_start, 50) << "the probe kept being answered";
  EXPECT_EQ(other.Command("SCRIPT", "KILL"), "+OK\r\n");
  const std::optional<std::string> killed = runner.ReadReply();
  ASSERT_TRUE(killed.has_value()) << "the script did not end within 10 s of SCRIPT KILL";
  EXPECT_EQ(killed->substr(0, 45), "-ERR Script killed by user with SCRIPT KILL..");
  EXPECT_EQ(other.Command("PING"), "+PONG\r\n");
  EXPECT_EQ(runner.Command("PING"), "+PONG\r\n");
  EXPECT_EQ(other.Command("SCRIPT", "KILL"), "-NOTBUSY No scripts in execution right now.\r\n");
  probe_->set_busy_is_answer(false);  // from here on, a BUSY is a failure again
  const int busy_after_kill = probe_->busy_replies();
  const std::size_t samples_after_kill = probe_->samples();
  EXPECT_TRUE(Eventually([&] { return probe_->samples() > samples_after_kill + 20; }, 5000ms))
      << "the probe runs normal rounds";
  EXPECT_EQ(probe_->busy_replies(), busy_after_kill);
}

// An AUTH brute force (issue 12): four connections pipeline wrong passwords for two seconds.
// Every refusal is counted in INFO acl_access_denied_auth, the right password still works,
// and the probe's p99 bound holds (TearDown): a failed AUTH costs one SHA-256 and a log
// entry, with no delay that would hold a worker.
TEST_F(Robust, AuthBruteForce) {
  ASSERT_EQ(admin_->Command("ACL", "SETUSER", "victim", "on", ">right", "~*", "+@all"),
            "+OK\r\n");
  std::atomic<long long> refused{0};
  std::atomic<int> bad{0};
  std::vector<std::thread> attackers;
  for (int t = 0; t < 4; ++t) {
    attackers.emplace_back([&, t] {
      RawConnection c(port(), 10s);
      std::string batch;
      for (int i = 0; i < 100; ++i) {
        batch += RawConnection::Encode({"AUTH", "victim", "guess" + std::to_string(t * 1000 + i)});
      }
      const auto end = std::chrono::steady_clock::now() + 2s;
      while (std::chrono::steady_clock::now() < end) {
        if (!c.Send(batch)) return bad.fetch_add(1), void();
        for (int i = 0; i < 100; ++i) {
          std::optional<std::string> r = c.ReadReply();
          if (!r || !r->starts_with("-WRONGPASS")) return bad.fetch_add(1), void();
          refused.fetch_add(1);
        }
      }
    });
  }
  for (std::thread& a : attackers) a.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_GT(refused.load(), 1000);
  const std::string info = admin_->Command("INFO", "stats");
  const auto at = info.find("acl_access_denied_auth:");
  ASSERT_NE(at, std::string::npos) << info;
  EXPECT_EQ(std::stoll(info.substr(at + 23)), refused.load());
  RawConnection user(port(), 10s);
  EXPECT_EQ(user.Command("AUTH", "victim", "right"), "+OK\r\n");
  std::printf("[ robust   ] %lld AUTH failures in 2 s\n", refused.load());
}

}  // namespace
}  // namespace latch::test
