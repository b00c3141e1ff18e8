// TEST.* over the wire: refused with a clear error unless test mode is on; latchd's
// --enable-test-commands (loopback only) and --clock manual; DEBUG ADVANCE-CLOCK shares the
// clock code.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <thread>

#include "latch/testing/scoped_server.h"
#include "support/embedded_server.h"
#include "support/eventually.h"
#include "support/raw_connection.h"
#include "support/server_process.h"

namespace latch::testing {
namespace {

using namespace std::chrono_literals;
using test::Eventually;
using test::RawConnection;

constexpr const char* kDisabled =
    "-ERR TEST commands are disabled; start latchd with --enable-test-commands yes\r\n";

TEST(TestCommandsTest, RefusedOnAServerThatDidNotEnableThem) {
  test::EmbeddedServer server;  // a plain latch::Server
  RawConnection conn(server.port());
  for (const char* cmd : {"TEST.CLOCK", "TEST.FAULT", "test.fault"}) {
    EXPECT_EQ(conn.Command(cmd, "CLEAR"), kDisabled) << cmd;
  }
  EXPECT_EQ(conn.Command("TEST.RESET"), kDisabled);
  EXPECT_EQ(conn.Command("TEST.COUNTS"), kDisabled);
  EXPECT_EQ(conn.Command("TEST.CLOCK", "ADVANCE", "10"), kDisabled);
  EXPECT_EQ(conn.Command("INFO").find("# Faults"), std::string::npos);  // not by default
  const std::string info = conn.Command("INFO", "faults");
  EXPECT_NE(info.find("test_mode:0\r\nfaults_armed:0\r\n"), std::string::npos) << info;
}

TEST(TestCommandsTest, ClockAdvanceStepwallAndGetOverTheWire) {
  ScopedServer server;
  RawConnection conn(server.port());
  EXPECT_EQ(conn.Command("SET", "k", "v", "PX", "500"), "+OK\r\n");
  const std::int64_t mono = server.clock().Now().mono_ms, wall = server.clock().Now().wall_ms;
  EXPECT_EQ(conn.Command("TEST.CLOCK", "ADVANCE", "499"), "+OK\r\n");
  EXPECT_EQ(conn.Command("PTTL", "k"), ":1\r\n");
  EXPECT_EQ(conn.Command("TEST.CLOCK", "advance", "1"), "+OK\r\n");
  EXPECT_EQ(conn.Command("GET", "k"), "$-1\r\n");
  EXPECT_EQ(conn.Command("TEST.CLOCK", "STEPWALL", "-60000"), "+OK\r\n");
  EXPECT_EQ(conn.Command("TEST.CLOCK", "GET"),
            "*6\r\n$7\r\nmono_ms\r\n:" + std::to_string(mono + 500) + "\r\n$7\r\nwall_ms\r\n:" +
                std::to_string(wall + 500 - 60000) + "\r\n$6\r\nmanual\r\n:1\r\n");
  EXPECT_EQ(conn.Command("TEST.CLOCK", "ADVANCE", "-1"),
            "-ERR the clock only moves forward; use STEPWALL to step back\r\n");
  EXPECT_EQ(conn.Command("TEST.CLOCK", "ADVANCE", "x"),
            "-ERR value is not an integer or out of range\r\n");
  EXPECT_EQ(conn.Command("TEST.CLOCK", "JUMP", "1"), "-ERR syntax error\r\n");
  // TEST.* themselves are not counted.
  EXPECT_EQ(conn.Command("TEST.COUNTS"),
            "*6\r\n$3\r\nget\r\n:1\r\n$4\r\npttl\r\n:1\r\n$3\r\nset\r\n:1\r\n");
}

TEST(TestCommandsTest, LatchdRefusesThemUnlessEveryBindAddressIsLoopback) {
  const std::string cmd = "timeout 10 " + std::string(LATCHD_PATH) +
                          " --port 0 --bind '127.0.0.1 0.0.0.0' --enable-test-commands yes"
                          " >/dev/null 2>&1";
  const int status = std::system(cmd.c_str());  // refused before binding: exits at once
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
}

TEST(TestCommandsTest, LatchdWithAManualClockMovesOnlyWhenTold) {
  test::LatchdProcess latchd({"--enable-test-commands", "yes", "--clock", "manual"});
  ASSERT_TRUE(latchd.ok()) << latchd.error();
  RawConnection conn(latchd.port());
  EXPECT_EQ(conn.Command("CONFIG", "GET", "clock"), "*2\r\n$5\r\nclock\r\n$6\r\nmanual\r\n");
  EXPECT_EQ(conn.Command("SET", "k", "v", "PX", "100"), "+OK\r\n");
  std::this_thread::sleep_for(150ms);  // real time passes: what must not move the clock
  EXPECT_EQ(conn.Command("PTTL", "k"), ":100\r\n");
  EXPECT_EQ(conn.Command("TEST.CLOCK", "ADVANCE", "100"), "+OK\r\n");
  EXPECT_EQ(conn.Command("EXISTS", "k"), ":0\r\n");
  EXPECT_NE(conn.Command("INFO").find("# Faults\r\ntest_mode:1\r\n"), std::string::npos);

  test::LatchdProcess plain;
  ASSERT_TRUE(plain.ok()) << plain.error();
  RawConnection other(plain.port());
  EXPECT_EQ(other.Command("TEST.CLOCK", "GET"), kDisabled);
  EXPECT_EQ(other.Command("INFO").find("# Faults"), std::string::npos);
}

TEST(TestCommandsTest, LatchdWithTestCommandsOnTheSystemClockSaysSo) {
  test::LatchdProcess latchd({"--enable-test-commands", "yes"});
  ASSERT_TRUE(latchd.ok()) << latchd.error();
  RawConnection conn(latchd.port());
  EXPECT_EQ(conn.Command("TEST.CLOCK", "ADVANCE", "1"),
            "-ERR the server runs on the system clock; start latchd with --clock manual\r\n");
  EXPECT_EQ(conn.Command("TEST.FAULT", "ERROR", "ERR nope", "COMMAND", "ping"), ":1\r\n");
  EXPECT_EQ(conn.Command("PING"), "-ERR nope\r\n");
}

// DEBUG ADVANCE-CLOCK goes through the same helper: waiters time out at once.
TEST(TestCommandsTest, DebugAdvanceClockAnswersDueWaiters) {
  Options o = ScopedServer::DefaultOptions();
  o.enable_debug_command = true;
  ScopedServer server(o);
  RawConnection holder(server.port());
  RawConnection waiter(server.port());
  ASSERT_EQ(holder.Command("LOCK.ACQUIRE", "L", "a", "60000").substr(0, 1), ":");
  ASSERT_TRUE(waiter.Send(RawConnection::Encode({"LOCK.ACQUIRE", "L", "b", "1000", "WAIT", "50"})));
  ASSERT_TRUE(Eventually([&] { return server.Lock("L")->waiters == 1; }));
  EXPECT_EQ(holder.Command("DEBUG", "ADVANCE-CLOCK", "50"), "+OK\r\n");
  EXPECT_EQ(server.Lock("L")->waiters, 0);
  EXPECT_EQ(waiter.ReadReply(), "$-1\r\n");
}

// EXEC holds every shard while its queue runs; moving the clock inside it expires and times
// out on those same shards, which must not wait for itself (it stopped the worker for good).
TEST(TestCommandsTest, ClockMovesInsideMultiExec) {
  test::LatchdProcess latchd(
      {"--enable-test-commands", "yes", "--clock", "manual", "--enable-debug-command", "yes"});
  ASSERT_TRUE(latchd.ok()) << latchd.error();
  RawConnection conn(latchd.port());
  EXPECT_EQ(conn.Command("SET", "k", "v", "PX", "100"), "+OK\r\n");
  EXPECT_EQ(conn.Command("SET", "j", "v", "PX", "200"), "+OK\r\n");
  EXPECT_EQ(conn.Command("MULTI"), "+OK\r\n");
  EXPECT_EQ(conn.Command("TEST.CLOCK", "ADVANCE", "100"), "+QUEUED\r\n");
  EXPECT_EQ(conn.Command("EXISTS", "k"), "+QUEUED\r\n");
  EXPECT_EQ(conn.Command("DEBUG", "ADVANCE-CLOCK", "100"), "+QUEUED\r\n");
  EXPECT_EQ(conn.Command("EXISTS", "j"), "+QUEUED\r\n");
  EXPECT_EQ(conn.Command("EXEC"), "*4\r\n+OK\r\n:0\r\n+OK\r\n:0\r\n");
  EXPECT_EQ(conn.Command("PING"), "+PONG\r\n");
}

}  // namespace
}  // namespace latch::testing
