// One long script must not freeze the server (issue 16 item 1), against a real latchd with
// a real clock and a short busy-reply-threshold: another client's keyspace command sent
// while the script runs is answered BUSY soon after the threshold (it must not wait on the
// script's shard locks for good), SCRIPT KILL ends a script that has not written, SHUTDOWN
// NOSAVE one that has, and SIGTERM ends the server whatever the script does. With one io
// thread the same holds for the clients of the script's own worker (the script runs on the
// script thread), as with Redis's single thread.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <chrono>
#include <string>
#include <thread>

#include "support/raw_connection.h"
#include "support/sanitizer.h"
#include "support/server_process.h"

namespace latch::test {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr char kFreezeBusy[] =
    "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN "
    "NOSAVE.\r\n";
constexpr int kThresholdMs = 200;

// With two io threads connections alternate between them: the script runs on the first
// connection's worker and the other client is served by the second one. With one, every
// client is on the worker of the script's client.
LatchdProcess StartFreezeLatchd(int io_threads = 2) {
  return LatchdProcess({"--io-threads", std::to_string(io_threads), "--busy-reply-threshold",
                        std::to_string(kThresholdMs)});
}

struct Clients {
  explicit Clients(int port)
      : runner(port, milliseconds(10000)), other(port, milliseconds(3000)) {}
  RawConnection runner;  // runs the script
  RawConnection other;   // must keep being answered
};

// Sends `script` on c.runner without reading its reply, and returns once it runs: CLIENT
// LIST shows the EVAL (set just before the script takes the shards) or is answered BUSY.
// Gives up at the first unanswered CLIENT LIST (a worker the script froze).
void StartScript(Clients& c, const std::string& script) {
  ASSERT_TRUE(c.runner.Send(RawConnection::Encode({"EVAL", script, "0"})));
  bool running = false;
  for (int i = 0; i < 200 && !running; ++i) {
    const std::string list = c.other.Command("CLIENT", "LIST");
    ASSERT_TRUE(list.rfind("<no reply", 0) != 0) << "CLIENT LIST unanswered: " << list;
    running = list.find("cmd=eval") != std::string::npos || list == kFreezeBusy;
    if (!running) std::this_thread::sleep_for(milliseconds(5));
  }
  ASSERT_TRUE(running) << "the script never started";
}

// Sends GET at once (the script holds every shard, not yet past the threshold) and
// expects BUSY within the threshold plus a little. The EVAL shows in CLIENT LIST just before
// the script takes the shards: a GET answered at once with k's value ($-1, no key) came
// before that, and is sent again (bounded).
void ExpectBusyGet(Clients& c) {
  const auto give_up = Clock::now() + milliseconds(5000);
  std::string reply;
  long long waited = 0;
  do {
    const auto start = Clock::now();
    reply = c.other.Command("GET", "k");
    waited = std::chrono::duration_cast<milliseconds>(Clock::now() - start).count();
  } while (reply == "$-1\r\n" && Clock::now() < give_up);
  EXPECT_EQ(reply, kFreezeBusy);
  EXPECT_LT(waited, kThresholdMs + 800) << "BUSY came late";
}

// A script that has not written: other clients get BUSY, SCRIPT KILL ends it and its client
// gets redis-server 7.0.15's exact text; both clients are served again afterwards.
void ExpectScriptKillEndsTheLoop(int io_threads) {
  LatchdProcess latchd = StartFreezeLatchd(io_threads);
  ASSERT_TRUE(latchd.ok()) << latchd.error();
  Clients c(latchd.port());
  StartScript(c, "while true do end");
  ExpectBusyGet(c);
  EXPECT_EQ(c.other.Command("PING"), kFreezeBusy);
  EXPECT_EQ(c.other.Command("SCRIPT", "KILL"), "+OK\r\n");
  auto reply = c.runner.ReadReply();
  ASSERT_TRUE(reply.has_value()) << "the script was not stopped";
  EXPECT_EQ(*reply,
            "-ERR Script killed by user with SCRIPT KILL... script: "
            "694a5fe1ddb97a4c6a1bf299d9537c7d3d0f84e7, on @user_script:1.\r\n");
  EXPECT_EQ(c.other.Command("GET", "k"), "$-1\r\n");
  EXPECT_EQ(c.runner.Command("PING"), "+PONG\r\n");
}

// A script that wrote cannot be killed (Redis's exact UNKILLABLE text); SHUTDOWN NOSAVE ends
// the server, which exits 0.
void ExpectShutdownNosaveEndsAScriptThatWrote(int io_threads) {
  LatchdProcess latchd = StartFreezeLatchd(io_threads);
  ASSERT_TRUE(latchd.ok()) << latchd.error();
  Clients c(latchd.port());
  StartScript(c, "redis.call('set', 'w', '1') while true do end");
  ExpectBusyGet(c);
  EXPECT_EQ(c.other.Command("SCRIPT", "KILL"),
            "-UNKILLABLE Sorry the script already executed write commands against the dataset. "
            "You can either wait the script termination or kill the server in a hard way using "
            "the SHUTDOWN NOSAVE command.\r\n");
  ASSERT_TRUE(c.other.Send(RawConnection::Encode({"SHUTDOWN", "NOSAVE"})));
  EXPECT_TRUE(c.other.WaitClosed());
  const int status = latchd.WaitExit();
  ASSERT_NE(status, -1) << "latchd did not exit by itself\n" << latchd.Log();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

#define LATCH_SKIP_SLOW_LUA()                                                                 \
  LATCH_SKIP_UNDER_TSAN("a real latchd under TSan runs Lua 5-15x slower than the test's "   \
                        "timing windows; the Debug and ASan runs assert it")

TEST(ScriptFreeze, OneIoThreadSameWorkerClientGetsBusyAndScriptKillEndsTheLoop) {
  LATCH_SKIP_SLOW_LUA();
  ExpectScriptKillEndsTheLoop(1);
}

TEST(ScriptFreeze, OneIoThreadScriptThatWroteEndsWithShutdownNosave) {
  LATCH_SKIP_SLOW_LUA();
  ExpectShutdownNosaveEndsAScriptThatWrote(1);
}

TEST(ScriptFreeze, WaitingClientGetsBusyAndScriptKillEndsTheLoop) {
  LATCH_SKIP_SLOW_LUA();
  ExpectScriptKillEndsTheLoop(2);
}

TEST(ScriptFreeze, ScriptThatWroteEndsWithShutdownNosave) {
  LATCH_SKIP_SLOW_LUA();
  ExpectShutdownNosaveEndsAScriptThatWrote(2);
}

TEST(ScriptFreeze, SigtermEndsTheServerDuringALongScript) {
  LATCH_SKIP_SLOW_LUA();
  LatchdProcess latchd = StartFreezeLatchd();
  ASSERT_TRUE(latchd.ok()) << latchd.error();
  Clients c(latchd.port());
  StartScript(c, "redis.call('set', 'w', '1') while true do end");
  // A client waiting for a shard the script holds, when the signal comes.
  ASSERT_TRUE(c.other.Send(RawConnection::Encode({"GET", "w"})));
  const int status = latchd.Stop();  // SIGTERM, then SIGKILL after a bounded wait
  ASSERT_NE(status, -1) << "SIGTERM was ignored\n" << latchd.Log();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

#undef LATCH_SKIP_SLOW_LUA

}  // namespace
}  // namespace latch::test
