// Scripts over real sockets: the cache is server-wide, a long script makes other clients
// get BUSY once it passes lua-time-limit (measured on the server's manual clock, so no
// sleeps decide anything), SCRIPT KILL stops a script that has not written and refuses one
// that has. With one io thread, the clients of the script's own worker are answered too:
// the script runs on the script thread.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "support/embedded_server.h"
#include "support/raw_connection.h"

namespace latch::test {
namespace {

constexpr char kBusy[] =
    "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN "
    "NOSAVE.\r\n";

TEST(ScriptWire, CacheIsSharedBetweenConnections) {
  EmbeddedServer server;
  RawConnection a(server.port()), b(server.port());
  EXPECT_EQ(a.Command("SCRIPT", "LOAD", "return ARGV[1]"),
            "$40\r\n098e0f0d1448c0a81dafe820f66d460eb09263da\r\n")
      << "sha1 of the body";
  EXPECT_EQ(b.Command("EVALSHA", "098E0F0D1448C0A81DAFE820F66D460EB09263DA", "0", "hi"),
            "$2\r\nhi\r\n");
  EXPECT_EQ(b.Command("SCRIPT", "FLUSH"), "+OK\r\n");
  EXPECT_EQ(a.Command("EVALSHA", "098e0f0d1448c0a81dafe820f66d460eb09263da", "0", "hi"),
            "-NOSCRIPT No matching script. Please use EVAL.\r\n");
  EXPECT_EQ(a.Command("EVAL", "x = 1", "0").substr(0, 40),
            "-ERR user_script:1: Attempt to modify a ");
}

// EVALSHA reads a per-thread copy of the cache: a SCRIPT FLUSH on any connection must reach
// the copies of every thread that has already run the script, and a SCRIPT LOAD after it
// must be seen again.
TEST(ScriptWire, FlushReachesEveryThreadsCopyOfTheCache) {
  EmbeddedServer server;
  RawConnection a(server.port()), b(server.port()), c(server.port());
  const std::string sha = "098e0f0d1448c0a81dafe820f66d460eb09263da";
  ASSERT_EQ(a.Command("SCRIPT", "LOAD", "return ARGV[1]"), "$40\r\n" + sha + "\r\n");
  for (RawConnection* conn : {&a, &b, &c}) {
    EXPECT_EQ(conn->Command("EVALSHA", sha, "0", "x"), "$1\r\nx\r\n");
  }
  EXPECT_EQ(c.Command("SCRIPT", "FLUSH"), "+OK\r\n");
  for (RawConnection* conn : {&a, &b, &c}) {
    EXPECT_EQ(conn->Command("EVALSHA", sha, "0", "x"),
              "-NOSCRIPT No matching script. Please use EVAL.\r\n");
    EXPECT_EQ(conn->Command("SCRIPT", "EXISTS", sha), "*1\r\n:0\r\n");
  }
  ASSERT_EQ(b.Command("SCRIPT", "LOAD", "return ARGV[1]"), "$40\r\n" + sha + "\r\n");
  for (RawConnection* conn : {&a, &b, &c}) {
    EXPECT_EQ(conn->Command("EVALSHA", sha, "0", "y"), "$1\r\ny\r\n");
  }
}

// Finds a second connection served by another worker thread than `runner`: the server has
// two io threads, and a client on the script's own thread cannot be served until it ends.
struct BusyFixture {
  explicit BusyFixture(Options options = EmbeddedServer::DefaultOptions()) : server(options) {}
  EmbeddedServer server;
  RawConnection runner{server.port(), std::chrono::milliseconds(10000)};
  RawConnection other{server.port(), std::chrono::milliseconds(3000)};
};

// One io thread: every client shares the script's client's worker.
Options OneIoThread() {
  Options options = EmbeddedServer::DefaultOptions();
  options.io_threads = 1;
  return options;
}

// Starts `script` on f.runner and moves the manual clock past lua-time-limit until `other`
// sees BUSY. Returns false if that never happens within the bounded attempts.
bool WaitUntilBusy(BusyFixture& f, std::future<std::string>* out);

bool StartBusyScript(BusyFixture& f, const std::string& script, std::future<std::string>* out) {
  *out = std::async(std::launch::async, [&f, script] {
    return f.runner.Command("EVAL", script, "0");
  });
  return WaitUntilBusy(f, out);
}

// Moves the manual clock until f.other is answered BUSY (false if never, or if the script
// ended first): the script started on f.runner is then past lua-time-limit.
bool WaitUntilBusy(BusyFixture& f, std::future<std::string>* out) {
  for (int i = 0; i < 2000; ++i) {
    f.server.clock().advance(10000);
    std::string reply = f.other.Command("PING");
    if (reply == kBusy) return true;
    if (reply != "+PONG\r\n") return false;
    if (out != nullptr &&
        out->wait_for(std::chrono::milliseconds(1)) == std::future_status::ready) {
      return false;
    }
  }
  return false;
}

TEST(ScriptWire, BusyThenScriptKill) {
  BusyFixture f;
  ASSERT_EQ(f.other.Command("SCRIPT", "KILL"), "-NOTBUSY No scripts in execution right now.\r\n");
  std::future<std::string> result;
  ASSERT_TRUE(StartBusyScript(f, "local i = 0 while true do i = i + 1 end", &result));
  EXPECT_EQ(f.other.Command("GET", "k"), kBusy);
  EXPECT_EQ(f.other.Command("SCRIPT", "KILL"), "+OK\r\n");
  ASSERT_EQ(result.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  std::string reply = result.get();
  EXPECT_EQ(reply.substr(0, 50), "-ERR Script killed by user with SCRIPT KILL... scr");
  EXPECT_NE(reply.find(", on @user_script:1.\r\n"), std::string::npos) << reply;
  EXPECT_EQ(f.other.Command("PING"), "+PONG\r\n");
  EXPECT_EQ(f.runner.Command("PING"), "+PONG\r\n");
}

// The script runs off the io thread: with one io thread, a client of the script's own
// worker gets BUSY past the threshold and SCRIPT KILL from it ends the script (before, that
// worker ran the script and answered nobody until it ended).
TEST(ScriptWire, OneIoThreadBusyThenScriptKill) {
  BusyFixture f(OneIoThread());
  std::future<std::string> result;
  ASSERT_TRUE(StartBusyScript(f, "while true do end", &result));
  EXPECT_EQ(f.other.Command("GET", "k"), kBusy);
  EXPECT_EQ(f.other.Command("SCRIPT", "KILL"), "+OK\r\n");
  ASSERT_EQ(result.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_EQ(result.get(),
            "-ERR Script killed by user with SCRIPT KILL... script: "
            "694a5fe1ddb97a4c6a1bf299d9537c7d3d0f84e7, on @user_script:1.\r\n");
  EXPECT_EQ(f.runner.Command("PING"), "+PONG\r\n");
}

// A pipeline around a script is answered in order: the connection parks while its script
// runs (reading on, running nothing) and resumes with the requests behind it.
TEST(ScriptWire, OneIoThreadPipelineAroundAScriptIsAnsweredInOrder) {
  BusyFixture f(OneIoThread());
  ASSERT_EQ(f.other.Command("SET", "k", "v"), "+OK\r\n");
  ASSERT_TRUE(f.runner.Send(RawConnection::Encode({"EVAL", "while true do end", "0"}) +
                            RawConnection::Encode({"GET", "k"}) +
                            RawConnection::Encode({"EVAL", "return ARGV[1]", "0", "x"}) +
                            RawConnection::Encode({"SET", "k", "w"})));
  ASSERT_TRUE(WaitUntilBusy(f, nullptr));
  EXPECT_EQ(f.other.Command("SCRIPT", "KILL"), "+OK\r\n");
  const auto killed = f.runner.ReadReply();
  ASSERT_TRUE(killed.has_value());
  EXPECT_EQ(killed->substr(0, 46), "-ERR Script killed by user with SCRIPT KILL...");
  EXPECT_EQ(f.runner.ReadReply(), "$1\r\nv\r\n");
  EXPECT_EQ(f.runner.ReadReply(), "$1\r\nx\r\n");
  EXPECT_EQ(f.runner.ReadReply(), "+OK\r\n");
  EXPECT_EQ(f.other.Command("GET", "k"), "$1\r\nw\r\n");
}

// A client that goes away while its script runs: the script runs to its end (its writes
// stay), its reply is dropped, and the server serves on.
TEST(ScriptWire, OneIoThreadClientLeavingDuringItsScript) {
  BusyFixture f(OneIoThread());
  ASSERT_TRUE(f.runner.Send(RawConnection::Encode(
      {"EVAL",
       "redis.call('set','w','1') local n = 0 for i = 1, 50000000 do n = n + 1 end "
       "redis.call('set','w','2') return n",
       "0"})));
  ASSERT_TRUE(WaitUntilBusy(f, nullptr));
  f.runner.Close();
  std::string reply;
  for (int i = 0; i < 600 && reply != "$1\r\n2\r\n"; ++i) {
    reply = f.other.Command("GET", "w");
    if (reply == kBusy) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(reply, "$1\r\n2\r\n") << "the script did not complete";
  EXPECT_EQ(f.other.Command("PING"), "+PONG\r\n");
  RawConnection late(f.server.port());
  EXPECT_EQ(late.Command("CLIENT", "LIST").find("cmd=eval"), std::string::npos)
      << "the script's client is gone";
}

// The script thread is joined by stop() (with a server that had run scripts) and started
// again by the first script after start(): no thread left behind, none missing.
TEST(ScriptWire, ScriptsRunAgainAfterStopAndStart) {
  EmbeddedServer server(OneIoThread());
  {
    RawConnection c(server.port());
    ASSERT_EQ(c.Command("EVAL", "return redis.call('incr', KEYS[1])", "1", "n"), ":1\r\n");
  }
  server.server().stop();
  const int second = server.server().start();
  RawConnection c(second);
  EXPECT_EQ(c.Command("EVAL", "return redis.call('incr', KEYS[1])", "1", "n"), ":2\r\n");
  EXPECT_EQ(c.Command("EVAL", "return redis.call('get', KEYS[1])", "1", "n"), "$1\r\n2\r\n");
}

// Clients that connect while a script is busy are all answered (BUSY, then SCRIPT KILL works
// from any of them): the acceptor hands none of them to the worker the script occupies. Before,
// every second new connection landed there and got no reply until the script ended.
TEST(ScriptWire, NewClientsDuringABusyScriptAreAnswered) {
  BusyFixture f;
  std::future<std::string> result;
  ASSERT_TRUE(StartBusyScript(f, "while true do end", &result));
  std::vector<std::unique_ptr<RawConnection>> late;
  for (int i = 0; i < 4; ++i) {
    late.push_back(
        std::make_unique<RawConnection>(f.server.port(), std::chrono::milliseconds(3000)));
    EXPECT_EQ(late.back()->Command("GET", "k"), kBusy) << "new connection " << i;
  }
  EXPECT_EQ(late.back()->Command("SCRIPT", "KILL"), "+OK\r\n");
  ASSERT_EQ(result.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  for (auto& c : late) EXPECT_EQ(c->Command("PING"), "+PONG\r\n");
}

// An EXEC arriving while a script is busy is refused before it runs: as Redis 7.0, the
// transaction is discarded with EXECABORT naming BUSY, not left waiting in MULTI.
TEST(ScriptWire, ExecDuringBusyScriptAbortsTheTransaction) {
  BusyFixture f;
  // Connections alternate between the two workers: `tx` shares `other`'s, not the script's.
  RawConnection spare(f.server.port());
  RawConnection tx(f.server.port());
  ASSERT_EQ(tx.Command("MULTI"), "+OK\r\n");
  ASSERT_EQ(tx.Command("SET", "k", "v"), "+QUEUED\r\n");
  std::future<std::string> result;
  ASSERT_TRUE(StartBusyScript(f, "while true do end", &result));
  EXPECT_EQ(tx.Command("EXEC"),
            std::string("-EXECABORT Transaction discarded because of: ") + (kBusy + 1));
  EXPECT_EQ(f.other.Command("SCRIPT", "KILL"), "+OK\r\n");
  ASSERT_EQ(result.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_EQ(tx.Command("EXEC"), "-ERR EXEC without MULTI\r\n");
  EXPECT_EQ(tx.Command("GET", "k"), "$-1\r\n");
}

TEST(ScriptWire, ScriptThatWroteIsUnkillable) {
  BusyFixture f;
  std::future<std::string> result;
  // Finite (about 10^8 VM instructions): the test cannot stop a script that wrote.
  ASSERT_TRUE(StartBusyScript(
      f, "redis.call('set','w','1') local n = 0 for i = 1, 50000000 do n = n + 1 end return n",
      &result));
  EXPECT_EQ(f.other.Command("SCRIPT", "KILL"),
            "-UNKILLABLE Sorry the script already executed write commands against the dataset. "
            "You can either wait the script termination or kill the server in a hard way using "
            "the SHUTDOWN NOSAVE command.\r\n");
  ASSERT_EQ(result.wait_for(std::chrono::seconds(60)), std::future_status::ready);
  EXPECT_EQ(result.get(), ":50000000\r\n");
  EXPECT_EQ(f.other.Command("GET", "w"), "$1\r\n1\r\n");
}

// The way out the UNKILLABLE error names: SHUTDOWN without NOSAVE is refused while the
// script is busy; SHUTDOWN NOSAVE stops the script (written or not) and the server.
TEST(ScriptWire, ShutdownNosaveStopsAnUnkillableScript) {
  BusyFixture f;
  std::future<std::string> result;
  ASSERT_TRUE(StartBusyScript(f, "redis.call('set','w','1') while true do end", &result));
  EXPECT_EQ(f.other.Command("SHUTDOWN"), kBusy);
  ASSERT_TRUE(f.other.Send(RawConnection::Encode({"SHUTDOWN", "NOSAVE"})));
  std::string trailing;
  EXPECT_TRUE(f.other.WaitClosed(&trailing));
  EXPECT_EQ(trailing, "") << "SHUTDOWN closes without a reply";
  ASSERT_EQ(result.wait_for(std::chrono::seconds(10)), std::future_status::ready)
      << "the script was not stopped";
  auto waited = std::async(std::launch::async, [&f] { f.server.server().wait(); });
  EXPECT_EQ(waited.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  RawConnection late(f.server.port(), std::chrono::milliseconds(500));
  EXPECT_FALSE(late.connected()) << "the listener is closed";
}

}  // namespace
}  // namespace latch::test
