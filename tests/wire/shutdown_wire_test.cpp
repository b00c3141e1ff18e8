// SHUTDOWN over real sockets: the embedded server closes every client and its listener and
// Server::wait() returns; the latchd process exits 0 on redis-cli's "shutdown". The refused
// forms (syntax, ABORT, inside MULTI, from a script) are compared with Redis byte for byte
// in corpus/server.txt.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <chrono>
#include <future>
#include <string>

#include "support/embedded_server.h"
#include "support/raw_connection.h"
#include "support/server_process.h"

namespace latch::test {
namespace {

TEST(ShutdownWire, ClosesEveryClientAndTheListener) {
  EmbeddedServer server;
  RawConnection a(server.port()), b(server.port());
  ASSERT_EQ(b.Command("SET", "k", "v"), "+OK\r\n");
  auto waited = std::async(std::launch::async, [&server] { server.server().wait(); });
  EXPECT_EQ(waited.wait_for(std::chrono::milliseconds(50)), std::future_status::timeout)
      << "wait() returned before anyone asked for a shutdown";
  EXPECT_EQ(a.Command("SHUTDOWN", "SAVE"), "-ERR Errors trying to SHUTDOWN. Check logs.\r\n")
      << "latchd keeps nothing on disk: SAVE is refused, the server keeps running";
  EXPECT_EQ(b.Command("GET", "k"), "$1\r\nv\r\n");

  ASSERT_TRUE(a.Send(RawConnection::Encode({"shutdown"})));
  std::string trailing;
  EXPECT_TRUE(a.WaitClosed(&trailing));
  EXPECT_EQ(trailing, "") << "SHUTDOWN closes without a reply";
  EXPECT_TRUE(b.WaitClosed()) << "every other client is closed too";
  EXPECT_EQ(waited.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  RawConnection late(server.port(), std::chrono::milliseconds(500));
  EXPECT_FALSE(late.connected()) << "the listener is closed";
  server.server().stop();  // joins the threads; a second stop (the destructor's) is a no-op
}

TEST(ShutdownWire, LatchdProcessExitsCleanly) {
  LatchdProcess latchd;
  ASSERT_TRUE(latchd.ok()) << latchd.error();
  RawConnection conn(latchd.port());
  EXPECT_EQ(conn.Command("SHUTDOWN", "ABORT"), "-ERR No shutdown in progress.\r\n");
  ASSERT_TRUE(conn.Send(RawConnection::Encode({"SHUTDOWN", "NOSAVE", "NOW"})));
  EXPECT_TRUE(conn.WaitClosed());
  const int status = latchd.WaitExit();
  ASSERT_NE(status, -1) << "latchd did not exit by itself\n" << latchd.Log();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_NE(latchd.Log().find("User requested shutdown..."), std::string::npos) << latchd.Log();
}

}  // namespace
}  // namespace latch::test
