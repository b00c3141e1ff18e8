// The journal across kill -9 and restart, against the latchd binary: what was acknowledged is
// there after the restart, leases that ran out while the server was down are not, fencing
// tokens continue upward, torn tails are handled as Redis does, rewrites lose nothing, and
// redis-check-aof accepts what latchd wrote.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "durability/latchd_child.h"
#include "support/eventually.h"
#include "support/free_port.h"
#include "support/http_connection.h"
#include "support/raw_connection.h"

namespace latch::test {
namespace {

using std::chrono::milliseconds;
namespace fs = std::filesystem;

std::uint64_t UnixMs() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count());
}

// The last incremental file the manifest lists.
std::string LastIncr(const LatchdChild& s) {
  std::ifstream in(s.aof_dir() + "/appendonly.aof.manifest");
  std::string line, last;
  while (std::getline(in, line)) {
    if (line.find("type i") != std::string::npos) last = line.substr(5, line.find(" seq") - 5);
  }
  return s.aof_dir() + "/" + last;
}

TEST(JournalRestartTest, AcknowledgedStateSurvivesKill9) {
  LatchdChild s(AppendfsyncAlways());
  ASSERT_TRUE(s.Start()) << s.Log();
  std::uint64_t token = 0;
  {
    RawConnection c(s.port());
    EXPECT_EQ(c.Command("SET", "plain", "v1"), "+OK\r\n");
    EXPECT_EQ(c.Command("SET", "lease", "owner-a", "NX", "PX", "60000"), "+OK\r\n");
    token = IntegerReply(c.Command("LOCK.ACQUIRE", "fenced", "owner-b", "60000"));
    ASSERT_NE(token, 0u);
    EXPECT_EQ(c.Command("SET", "gone", "x"), "+OK\r\n");
    EXPECT_EQ(c.Command("DEL", "gone"), ":1\r\n");
    EXPECT_EQ(c.Command("LOCK.ACQUIRE", "released", "owner-c", "60000").substr(0, 1), ":");
    EXPECT_EQ(c.Command("LOCK.RELEASE", "released", "owner-c"), ":1\r\n");
    EXPECT_EQ(c.Command("SET", "persisted", "p", "PX", "60000"), "+OK\r\n");
    EXPECT_EQ(c.Command("PERSIST", "persisted"), ":1\r\n");
  }
  s.Kill9();
  ASSERT_TRUE(s.Start()) << s.Log();
  RawConnection c(s.port());
  EXPECT_EQ(c.Command("GET", "plain"), "$2\r\nv1\r\n");
  EXPECT_EQ(c.Command("GET", "lease"), "$7\r\nowner-a\r\n");
  const std::string pttl = c.Command("PTTL", "lease");
  ASSERT_EQ(pttl[0], ':');
  EXPECT_GT(std::stoll(pttl.substr(1)), 50000) << "the deadline is the absolute one";
  EXPECT_EQ(c.Command("GET", "gone"), "$-1\r\n");
  EXPECT_EQ(c.Command("GET", "released"), "$-1\r\n");
  EXPECT_EQ(c.Command("PTTL", "persisted"), ":-1\r\n");
  // The lock keeps its owner and token; the next grant of any key is above it.
  EXPECT_EQ(c.Command("LOCK.RELEASE", "fenced", "owner-x"), ":0\r\n");
  const std::string info = c.Command("LOCK.INFO", "fenced");
  EXPECT_NE(info.find(std::to_string(token)), std::string::npos) << info;
  EXPECT_GT(IntegerReply(c.Command("LOCK.ACQUIRE", "other", "o", "1000")), token);
}

// FLUSHALL is journaled shard by shard; it replays right with another shard count too.
TEST(JournalRestartTest, FlushAllReplaysWhateverTheShardCount) {
  LatchdChild s({"--appendonly", "yes", "--appendfsync", "always", "--shards", "32"});
  ASSERT_TRUE(s.Start()) << s.Log();
  {
    RawConnection c(s.port());
    for (int i = 0; i < 50; ++i) {
      ASSERT_EQ(c.Command("SET", "before:" + std::to_string(i), "v"), "+OK\r\n");
    }
    EXPECT_EQ(c.Command("FLUSHALL"), "+OK\r\n");
    EXPECT_EQ(c.Command("SET", "after", "v"), "+OK\r\n");
  }
  s.Kill9();
  LatchdChild other({"--appendonly", "yes", "--shards", "8"});
  fs::create_directories(other.aof_dir());
  for (const auto& f : fs::directory_iterator(s.aof_dir())) {
    fs::copy_file(f.path(), other.aof_dir() + "/" + f.path().filename().string());
  }
  for (LatchdChild* server : {&s, &other}) {
    ASSERT_TRUE(server->Start()) << server->Log();
    RawConnection c(server->port());
    EXPECT_EQ(c.Command("DBSIZE"), ":1\r\n");
    EXPECT_EQ(c.Command("GET", "after"), "$1\r\nv\r\n");
  }
}

TEST(JournalRestartTest, LeaseThatRanOutWhileDownIsNotRestored) {
  LatchdChild s(AppendfsyncAlways());
  ASSERT_TRUE(s.Start()) << s.Log();
  std::uint64_t short_deadline_ms = 0;
  {
    RawConnection c(s.port());
    EXPECT_EQ(c.Command("SET", "short", "a", "NX", "PX", "300"), "+OK\r\n");
    ASSERT_NE(IntegerReply(c.Command("LOCK.ACQUIRE", "short-lock", "b", "300")), 0u);
    EXPECT_EQ(c.Command("SET", "long", "c", "NX", "PX", "60000"), "+OK\r\n");
    for (const char* key : {"short", "short-lock"}) {  // absolute Unix ms
      short_deadline_ms = std::max(short_deadline_ms, IntegerReply(c.Command("PEXPIRETIME", key)));
    }
  }
  s.Kill9();
  // Restarted once the wall clock the server reads has passed the short leases' deadline.
  ASSERT_NE(short_deadline_ms, 0u);
  ASSERT_TRUE(Eventually([&] { return UnixMs() > short_deadline_ms; }));
  ASSERT_TRUE(s.Start()) << s.Log();
  RawConnection c(s.port());
  EXPECT_EQ(c.Command("EXISTS", "short", "short-lock", "long"), ":1\r\n");
}

// The other half of the Redlock paper's advice: no journal, but no grant for a TTL.
TEST(JournalRestartTest, LockRestartDelayHoldsGrantsBack) {
  LatchdChild s({"--lock-restart-delay", "1500"});
  const auto starting = std::chrono::steady_clock::now();  // the delay counts from later
  ASSERT_TRUE(s.Start()) << s.Log();
  RawConnection c(s.port());
  EXPECT_EQ(c.Command("SET", "k", "v", "NX", "PX", "1000"), "$-1\r\n");
  EXPECT_EQ(c.Command("SETNX", "k", "v"), ":0\r\n");
  EXPECT_EQ(c.Command("LOCK.ACQUIRE", "k", "o", "1000"), "$-1\r\n");
  EXPECT_EQ(c.Command("LOCK.ACQUIRE", "k", "o", "1000", "WAIT", "100"), "$-1\r\n");
  EXPECT_EQ(c.Command("SET", "plain", "v"), "+OK\r\n") << "only grants are held back";
  // Granted again once the delay is over, and not before.
  EXPECT_TRUE(
      Eventually([&] { return c.Command("SET", "k", "v", "NX", "PX", "1000") == "+OK\r\n"; },
                 milliseconds(10000)));
  EXPECT_GE(std::chrono::steady_clock::now() - starting, milliseconds(1500));
  EXPECT_NE(IntegerReply(c.Command("LOCK.ACQUIRE", "k2", "o", "1000")), 0u);
}

TEST(JournalRestartTest, TornTailIsCutWhenAllowedAndRefusedOtherwise) {
  LatchdChild s(AppendfsyncAlways());
  ASSERT_TRUE(s.Start()) << s.Log();
  {
    RawConnection c(s.port());
    EXPECT_EQ(c.Command("SET", "kept", "1"), "+OK\r\n");
  }
  s.Kill9();
  const std::string incr = LastIncr(s);
  const auto whole = fs::file_size(incr);
  {
    std::ofstream out(incr, std::ios::app | std::ios::binary);
    out << "*3\r\n$3\r\nSET\r\n$4\r\ntorn\r\n$5\r\nab";  // a crash mid-write
  }
  // aof-load-truncated no: refuses, with Redis's message, and leaves the file alone.
  {
    LatchdChild strict({"--appendonly", "yes", "--aof-load-truncated", "no"});
    fs::create_directories(strict.aof_dir());
    for (const auto& f : fs::directory_iterator(s.aof_dir())) {
      fs::copy_file(f.path(), strict.aof_dir() + "/" + f.path().filename().string());
    }
    EXPECT_FALSE(strict.Start());
    EXPECT_TRUE(WIFEXITED(strict.exit_status()) && WEXITSTATUS(strict.exit_status()) == 1);
    EXPECT_NE(strict.Log().find("Unexpected end of file reading the append only file"),
              std::string::npos)
        << strict.Log();
  }
  ASSERT_TRUE(s.Start()) << s.Log();
  EXPECT_NE(s.Log().find("!!! Warning: short read while loading the AOF file"), std::string::npos);
  EXPECT_NE(s.Log().find("loaded anyway because aof-load-truncated is enabled"), std::string::npos);
  EXPECT_EQ(fs::file_size(incr), whole) << "the torn record is cut off";
  RawConnection c(s.port());
  EXPECT_EQ(c.Command("GET", "kept"), "$1\r\n1\r\n");
  EXPECT_EQ(c.Command("EXISTS", "torn"), ":0\r\n");
}

// The loop: kill -9 right after an acknowledged grant, under always, never loses it.
TEST(JournalRestartTest, Kill9AfterAcknowledgedGrantNeverLosesIt) {
  LatchdChild s(AppendfsyncAlways());
  std::uint64_t last_token = 0;
  for (int round = 0; round < 15; ++round) {
    ASSERT_TRUE(s.Start()) << s.Log();
    const std::string key = "loop:" + std::to_string(round);
    std::uint64_t token = 0;
    {
      RawConnection c(s.port());
      token = IntegerReply(c.Command("LOCK.ACQUIRE", key, "holder", "60000"));
      ASSERT_GT(token, last_token) << "round " << round;
      EXPECT_EQ(c.Command("SET", key + ":nx", "holder", "NX", "PX", "60000"), "+OK\r\n");
      s.Kill9();  // the very moment the client heard of the grant
    }
    last_token = token;
    ASSERT_TRUE(s.Start()) << s.Log();
    RawConnection c(s.port());
    for (int r = 0; r <= round; ++r) {
      const std::string k = "loop:" + std::to_string(r);
      EXPECT_EQ(c.Command("GET", k), "$6\r\nholder\r\n") << k;
      EXPECT_EQ(c.Command("GET", k + ":nx"), "$6\r\nholder\r\n") << k;
    }
    EXPECT_EQ(c.Command("LOCK.ACQUIRE", key, "thief", "1000"), "$-1\r\n");
    s.Kill9();
  }
}

// everysec and no, as Redis: a reply goes out only after its records were write()n, so a
// kill -9 (the process, not the machine) loses nothing acknowledged. The last write of each
// round is killed the moment its reply arrives; a pipelined burst checks the group writes.
TEST(JournalRestartTest, Kill9LosesNothingAcknowledgedUnderEverysecAndNo) {
  for (const char* policy : {"everysec", "no"}) {
    LatchdChild s({"--appendonly", "yes", "--appendfsync", policy});
    for (int round = 0; round < 6; ++round) {
      ASSERT_TRUE(s.Start()) << s.Log();
      const std::string key = std::string(policy) + ":" + std::to_string(round);
      {
        RawConnection c(s.port());
        std::string burst;
        for (int i = 0; i < 200; ++i) {
          burst += RawConnection::Encode({"SET", key + ":" + std::to_string(i), "v"});
        }
        ASSERT_TRUE(c.Send(burst));
        for (int i = 0; i < 200; ++i) ASSERT_EQ(c.ReadReply().value_or(""), "+OK\r\n") << i;
        ASSERT_EQ(c.Command("SET", key, "holder", "NX", "PX", "60000"), "+OK\r\n");
        s.Kill9();  // the very moment the client heard of it
      }
      ASSERT_TRUE(s.Start()) << s.Log();
      RawConnection c(s.port());
      for (int r = 0; r <= round; ++r) {
        const std::string k = std::string(policy) + ":" + std::to_string(r);
        EXPECT_EQ(c.Command("GET", k), "$6\r\nholder\r\n") << k;
        EXPECT_EQ(c.Command("EXISTS", k + ":0", k + ":199"), ":2\r\n") << k;
      }
      s.Kill9();
    }
  }
}

// The REST endpoint answers as a RESP connection does: a kill -9 the moment the HTTP answer
// arrives loses nothing it acknowledged (everysec: written before the answer; always: synced).
TEST(JournalRestartTest, Kill9LosesNothingAcknowledgedOverRest) {
  for (const char* policy : {"everysec", "always"}) {
    const int rest_port = FreePort();
    LatchdChild s({"--appendonly", "yes", "--appendfsync", policy, "--rest-port",
                   std::to_string(rest_port), "--rest-token", "tok"});
    for (int round = 0; round < 4; ++round) {
      ASSERT_TRUE(s.Start()) << s.Log();
      const std::string key = std::string("rest:") + policy + ":" + std::to_string(round);
      {
        // A pipeline: its last records are appended the moment before the answer is built.
        std::string body = "[";
        for (int i = 0; i < 300; ++i)
          body += "[\"SET\",\"" + key + ":" + std::to_string(i) + "\",\"v\"],";
        body += "[\"SET\",\"" + key + "\",\"v\",\"NX\"]]";
        HttpConnection http(rest_port);
        const HttpResponse r =
            http.Request("POST", "/pipeline", body, {"Authorization: Bearer tok"});
        ASSERT_EQ(r.status, 200) << r.body;
        s.Kill9();
      }
      ASSERT_TRUE(s.Start()) << s.Log();
      RawConnection c(s.port());
      for (int r = 0; r <= round; ++r) {
        const std::string k = std::string("rest:") + policy + ":" + std::to_string(r);
        EXPECT_EQ(c.Command("GET", k), "$1\r\nv\r\n") << k;
        EXPECT_EQ(c.Command("EXISTS", k + ":0", k + ":299"), ":2\r\n") << k;
      }
      s.Kill9();
    }
  }
}

// Writes keep coming during BGREWRITEAOF; a kill -9 right after loses none of them, and
// redis-check-aof accepts the journal written under that load.
TEST(JournalRestartTest, RewriteUnderLoadLosesNothingAndRedisCheckAofAccepts) {
  LatchdChild s(AppendfsyncAlways());
  ASSERT_TRUE(s.Start()) << s.Log();
  constexpr int kClients = 4;
  constexpr int kPerClient = 300;
  {
    RawConnection c(s.port());
    for (int i = 0; i < 200; ++i) {
      ASSERT_EQ(c.Command("SET", "base:" + std::to_string(i), "v", "PX", "600000"), "+OK\r\n");
    }
  }
  std::vector<std::thread> writers;
  std::atomic<int> acked{0};
  for (int w = 0; w < kClients; ++w) {
    writers.emplace_back([&, w] {
      RawConnection c(s.port());
      for (int i = 0; i < kPerClient; ++i) {
        const std::string key = "w" + std::to_string(w) + ":" + std::to_string(i);
        const std::string r = (i % 2 == 0) ? c.Command("LOCK.ACQUIRE", key, "o", "600000")
                                           : c.Command("SET", key, "o", "NX", "PX", "600000");
        if (r[0] == ':' || r == "+OK\r\n") acked.fetch_add(1);
      }
    });
  }
  {
    RawConnection c(s.port());
    // The rewrite starts while the writers write.
    EXPECT_TRUE(Eventually([&] { return acked.load() >= kClients; }));
    EXPECT_EQ(c.Command("BGREWRITEAOF"), "+Background append only file rewriting started\r\n");
  }
  for (auto& t : writers) t.join();
  EXPECT_EQ(acked.load(), kClients * kPerClient);
  // Let the rewrite finish, then crash; then again a crash in the middle of a rewrite.
  {
    RawConnection c(s.port());
    EXPECT_TRUE(Eventually(
        [&] {
          return c.Command("INFO", "persistence").find("aof_rewrite_in_progress:0") !=
                 std::string::npos;
        },
        milliseconds(10000)));
  }
  {
    RawConnection c(s.port());
    EXPECT_EQ(c.Command("BGREWRITEAOF"), "+Background append only file rewriting started\r\n");
    EXPECT_EQ(c.Command("SET", "during", "x"), "+OK\r\n");
  }
  s.Kill9();
  std::string out;
  EXPECT_EQ(RunCommand("redis-check-aof " + s.aof_dir() + "/appendonly.aof.manifest", &out), 0)
      << out;
  EXPECT_NE(out.find("All AOF files and manifest are valid"), std::string::npos) << out;
  ASSERT_TRUE(s.Start()) << s.Log();
  RawConnection c(s.port());
  EXPECT_EQ(c.Command("DBSIZE"), ":" + std::to_string(200 + kClients * kPerClient + 1) + "\r\n");
  EXPECT_EQ(c.Command("GET", "during"), "$1\r\nx\r\n");
}

// While a large journal loads, the port answers and commands get Redis's -LOADING.
TEST(JournalRestartTest, ClientsGetLoadingWhileTheJournalLoads) {
  std::vector<std::string> args = AppendfsyncAlways();
  args.insert(args.end(), {"--enable-protected-configs", "local"});  // CONFIG SET dir below
  LatchdChild s(args);
  {
    fs::create_directories(s.aof_dir());
    std::ofstream manifest(s.aof_dir() + "/appendonly.aof.manifest");
    manifest << "file appendonly.aof.1.incr.aof seq 1 type i\n";
    std::ofstream incr(s.aof_dir() + "/appendonly.aof.1.incr.aof", std::ios::binary);
    for (int i = 0; i < 150000; ++i) {
      const std::string key = "k" + std::to_string(i);
      incr << "*3\r\n$3\r\nSET\r\n$" << key.size() << "\r\n" << key << "\r\n$1\r\nv\r\n";
    }
  }
  std::atomic<bool> done{false};
  std::atomic<int> loading_replies{0};
  std::atomic<int> ping_loading{0};  // PING has no loading flag in Redis 7.0 either
  std::string dir_reply;             // CONFIG SET dir while loading (the probe thread's)
  std::thread probe([&] {
    while (!done) {
      RawConnection c(s.port(), milliseconds(500));
      if (!c.connected()) continue;
      while (!done) {
        if (c.Command("PING") == "-LOADING Redis is loading the dataset in memory\r\n") {
          ping_loading.fetch_add(1);
        }
        const std::string r = c.Command("GET", "probe");
        if (r == "-LOADING Redis is loading the dataset in memory\r\n") {
          loading_replies.fetch_add(1);
          // As Redis (DENY_LOADING_CONFIG): no chdir under the loader's relative paths.
          if (dir_reply.empty()) dir_reply = c.Command("CONFIG", "SET", "dir", s.dir());
        } else {
          break;
        }
      }
    }
  });
  const bool started = s.Start();
  done = true;
  probe.join();
  ASSERT_TRUE(started) << s.Log();
  EXPECT_GT(loading_replies.load(), 0);
  EXPECT_GT(ping_loading.load(), 0) << "a health check's PING must not pass while loading";
  // +OK only if the load ended between the probe's GET and its CONFIG SET.
  EXPECT_TRUE(dir_reply == "-LOADING Redis is loading the dataset in memory\r\n" ||
              dir_reply == "+OK\r\n")
      << dir_reply;
  RawConnection c(s.port());
  EXPECT_EQ(c.Command("DBSIZE"), ":150000\r\n");
  EXPECT_EQ(c.Command("SET", "probe", "x"), "+OK\r\n");
}

// auto-aof-rewrite-*: the journal is compacted by itself once it has grown enough.
TEST(JournalRestartTest, AutomaticRewriteCompactsTheJournal) {
  LatchdChild s({"--appendonly", "yes", "--auto-aof-rewrite-min-size", "4kb",
                 "--auto-aof-rewrite-percentage", "100"});
  ASSERT_TRUE(s.Start()) << s.Log();
  RawConnection c(s.port());
  for (int i = 0; i < 400; ++i) ASSERT_EQ(c.Command("SET", "same", std::to_string(i)), "+OK\r\n");
  const bool rewrote = Eventually(
      [&] { return c.Command("INFO", "persistence").find("aof_rewrites:0") == std::string::npos; },
      milliseconds(10000));
  EXPECT_TRUE(rewrote) << c.Command("INFO", "persistence");
  s.Kill9();
  ASSERT_TRUE(s.Start()) << s.Log();
  RawConnection again(s.port());
  EXPECT_EQ(again.Command("GET", "same"), "$3\r\n399\r\n");
}

// kill -9 at several moments of a rewrite (right at its start, during the snapshot, around
// the manifest swap): every acknowledged write is there after the restart, every time.
TEST(JournalRestartTest, Kill9DuringRewriteLosesNothingAcknowledged) {
  LatchdChild s(AppendfsyncAlways());
  std::vector<std::string> acked;
  for (int round = 0; round < 6; ++round) {
    ASSERT_TRUE(s.Start()) << s.Log();
    {
      RawConnection c(s.port());
      std::string pipeline;
      for (int i = 0; i < 2000; ++i) {
        pipeline +=
            RawConnection::Encode({"SET", "bulk:" + std::to_string(round) + ":" + std::to_string(i),
                                   "v", "PX", "600000"});
      }
      ASSERT_TRUE(c.Send(pipeline));
      for (int i = 0; i < 2000; ++i) ASSERT_EQ(c.ReadReply(), "+OK\r\n");
      EXPECT_EQ(c.Command("BGREWRITEAOF"), "+Background append only file rewriting started\r\n");
      std::this_thread::sleep_for(milliseconds(round * 25));
      const std::string key = "during:" + std::to_string(round);
      if (c.Command("SET", key, "x") == "+OK\r\n") acked.push_back(key);
    }
    s.Kill9();
    ASSERT_TRUE(s.Start()) << s.Log();
    RawConnection c(s.port());
    for (const std::string& key : acked) EXPECT_EQ(c.Command("GET", key), "$1\r\nx\r\n") << key;
    EXPECT_EQ(c.Command("DBSIZE"),
              ":" + std::to_string(2000 * (round + 1) + acked.size()) + "\r\n");
    s.Kill9();
  }
  EXPECT_EQ(acked.size(), 6u);
}

// aof-timestamp-enabled: Redis's "#TS:" annotations, which the loader and redis-check-aof skip.
TEST(JournalRestartTest, TimestampAnnotationsAreWrittenAndSkipped) {
  LatchdChild s(
      {"--appendonly", "yes", "--appendfsync", "always", "--aof-timestamp-enabled", "yes"});
  ASSERT_TRUE(s.Start()) << s.Log();
  {
    RawConnection c(s.port());
    EXPECT_EQ(c.Command("SET", "a", "1"), "+OK\r\n");
    EXPECT_EQ(c.Command("SET", "b", "2"), "+OK\r\n");
  }
  s.Kill9();
  std::ifstream in(LastIncr(s), std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text.rfind("#TS:", 0), 0u) << text;
  std::string out;
  EXPECT_EQ(RunCommand("redis-check-aof " + s.aof_dir() + "/appendonly.aof.manifest", &out), 0)
      << out;
  ASSERT_TRUE(s.Start()) << s.Log();
  RawConnection c(s.port());
  EXPECT_EQ(c.Command("MGET", "a", "b"), "*2\r\n$1\r\n1\r\n$1\r\n2\r\n");
}

TEST(JournalRestartTest, InfoPersistenceHasRedisFields) {
  LatchdChild s(AppendfsyncAlways());
  ASSERT_TRUE(s.Start()) << s.Log();
  RawConnection c(s.port());
  EXPECT_EQ(c.Command("SET", "k", "v"), "+OK\r\n");
  const std::string info = c.Command("INFO", "persistence");
  for (const char* field : {"\r\nloading:0\r\n", "aof_enabled:1", "aof_rewrite_in_progress:0",
                            "aof_last_bgrewrite_status:ok", "aof_last_write_status:ok",
                            "aof_current_size:", "aof_base_size:"}) {
    EXPECT_NE(info.find(field), std::string::npos) << field << "\n" << info;
  }
  EXPECT_EQ(c.Command("CONFIG", "GET", "appendfsync"),
            "*2\r\n$11\r\nappendfsync\r\n$6\r\nalways\r\n");
}

}  // namespace
}  // namespace latch::test
