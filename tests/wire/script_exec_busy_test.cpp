// A script that never ends, sent inside MULTI/EXEC or through the REST endpoint, with one
// and with two io threads: every other client is answered (BUSY past busy-reply-threshold,
// moved on the server's manual clock), SCRIPT KILL ends the script, and its client gets the
// reply Redis 7.0.15 gives (checked against redis-server: the kill error inside EXEC's
// array, the queued commands around it applied). Before, these scripts ran on the worker of
// their client: with one io thread nobody was answered until the script ended.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "rest_fixture.h"
#include "support/embedded_server.h"
#include "support/raw_connection.h"

namespace latch::test {
namespace {

constexpr char kBusyError[] =
    "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN "
    "NOSAVE.\r\n";
constexpr char kKilledError[] =
    "-ERR Script killed by user with SCRIPT KILL... script: "
    "694a5fe1ddb97a4c6a1bf299d9537c7d3d0f84e7, on @user_script:1.\r\n";
constexpr char kEndlessScript[] = "while true do end";

Options RestWithIoThreads(int n) {
  Options o = RestOptions();
  o.io_threads = n;
  return o;
}

// A server, the client that runs the script, and two more clients created before it starts
// (connections alternate between workers: with two io threads one of them shares the
// script's client's worker). `others` must all get BUSY, then PONG once it ends.
struct ExecBusyFixture {
  explicit ExecBusyFixture(int io_threads) : rest(RestWithIoThreads(io_threads)) {
    for (int i = 0; i < 2; ++i) {
      others.push_back(std::make_unique<RawConnection>(rest.resp_port(), kWait));
    }
  }
  static constexpr std::chrono::milliseconds kWait{3000};
  RestServer rest;
  RawConnection runner{rest.resp_port(), std::chrono::milliseconds(10000)};
  std::vector<std::unique_ptr<RawConnection>> others;

  // Moves the manual clock until others[0] is answered BUSY (false if never, or if `done`
  // becomes ready first): the script is then past lua-time-limit.
  template <class Future>
  bool WaitUntilBusy(Future& done) {
    for (int i = 0; i < 2000; ++i) {
      rest.server.clock().advance(10000);
      const std::string reply = others[0]->Command("PING");
      if (reply == kBusyError) return true;
      if (reply != "+PONG\r\n") return false;
      if (done.wait_for(std::chrono::milliseconds(1)) == std::future_status::ready) return false;
    }
    return false;
  }

  // Every other client is answered BUSY, and a REST request too.
  void ExpectEveryoneBusy() {
    for (auto& c : others) EXPECT_EQ(c->Command("GET", "k"), kBusyError);
    const HttpResponse r = rest.Post("/", R"(["GET","k"])");
    EXPECT_EQ(r.status, 400);
    EXPECT_EQ(r.body,
              R"({"error":"BUSY Redis is busy running a script. You can only call SCRIPT KILL or )"
              R"(SHUTDOWN NOSAVE."})");
  }

  void ExpectEveryoneServed() {
    for (auto& c : others) EXPECT_EQ(c->Command("PING"), "+PONG\r\n");
    EXPECT_EQ(runner.Command("PING"), "+PONG\r\n");
  }
};

class ScriptExecBusy : public ::testing::TestWithParam<int> {};

// As redis-server answers `MULTI / SET a 1 / EVAL loop / SET b 2 / EXEC` killed meanwhile:
// *3 +OK, the kill error, +OK; both SETs applied. The request pipelined behind EXEC is
// answered after it.
TEST_P(ScriptExecBusy, ExecThenScriptKill) {
  ExecBusyFixture f(GetParam());
  ASSERT_TRUE(f.runner.Send(RawConnection::Encode({"MULTI"}) +
                            RawConnection::Encode({"SET", "a", "1"}) +
                            RawConnection::Encode({"EVAL", kEndlessScript, "0"}) +
                            RawConnection::Encode({"SET", "b", "2"}) +
                            RawConnection::Encode({"EXEC"}) + RawConnection::Encode({"GET", "b"})));
  EXPECT_EQ(f.runner.ReadReply(), "+OK\r\n");
  for (int i = 0; i < 3; ++i) EXPECT_EQ(f.runner.ReadReply(), "+QUEUED\r\n");
  auto exec = std::async(std::launch::async, [&f] { return f.runner.ReadReply(); });
  ASSERT_TRUE(f.WaitUntilBusy(exec));
  f.ExpectEveryoneBusy();
  EXPECT_EQ(f.others[1]->Command("SCRIPT", "KILL"), "+OK\r\n");
  ASSERT_EQ(exec.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_EQ(exec.get(), std::string("*3\r\n+OK\r\n") + kKilledError + "+OK\r\n");
  EXPECT_EQ(f.runner.ReadReply(), "$1\r\n2\r\n");
  EXPECT_EQ(f.others[0]->Command("MGET", "a", "b"), "*2\r\n$1\r\n1\r\n$1\r\n2\r\n");
  f.ExpectEveryoneServed();
}

// A script in EXEC that wrote cannot be killed (as Redis); SHUTDOWN NOSAVE, sent by a client
// of any worker, stops it and the server.
TEST_P(ScriptExecBusy, ExecScriptThatWroteStopsOnShutdownNosave) {
  ExecBusyFixture f(GetParam());
  ASSERT_TRUE(f.runner.Send(
      RawConnection::Encode({"MULTI"}) +
      RawConnection::Encode({"EVAL", "redis.call('set','w','1') while true do end", "0"}) +
      RawConnection::Encode({"EXEC"})));
  EXPECT_EQ(f.runner.ReadReply(), "+OK\r\n");
  EXPECT_EQ(f.runner.ReadReply(), "+QUEUED\r\n");
  auto exec = std::async(std::launch::async, [&f] { return f.runner.ReadReply(); });
  ASSERT_TRUE(f.WaitUntilBusy(exec));
  EXPECT_EQ(f.others[1]->Command("SCRIPT", "KILL").substr(0, 12), "-UNKILLABLE ");
  ASSERT_TRUE(f.others[1]->Send(RawConnection::Encode({"SHUTDOWN", "NOSAVE"})));
  EXPECT_TRUE(f.others[1]->WaitClosed());
  ASSERT_EQ(exec.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  auto waited = std::async(std::launch::async, [&f] { f.rest.server.server().wait(); });
  EXPECT_EQ(waited.wait_for(std::chrono::seconds(10)), std::future_status::ready);
}

// The transaction's session goes to the script thread and back: WATCH is checked there,
// SELECT in the queue lasts after EXEC, and the client's pipeline goes on in order.
TEST_P(ScriptExecBusy, ExecWithScriptKeepsTheSession) {
  ExecBusyFixture f(GetParam());
  RawConnection& c = f.runner;
  ASSERT_EQ(c.Command("SET", "k", "0"), "+OK\r\n");
  ASSERT_EQ(c.Command("WATCH", "k"), "+OK\r\n");
  ASSERT_EQ(f.others[0]->Command("SET", "k", "1"), "+OK\r\n");
  ASSERT_EQ(c.Command("MULTI"), "+OK\r\n");
  ASSERT_EQ(c.Command("EVAL", "return 1", "0"), "+QUEUED\r\n");
  EXPECT_EQ(c.Command("EXEC"), "*-1\r\n") << "k changed since WATCH";
  ASSERT_EQ(c.Command("MULTI"), "+OK\r\n");
  ASSERT_EQ(c.Command("SELECT", "3"), "+QUEUED\r\n");
  ASSERT_EQ(c.Command("EVAL", "return redis.call('set', KEYS[1], 'v')", "1", "k3"), "+QUEUED\r\n");
  EXPECT_EQ(c.Command("EXEC"), "*2\r\n+OK\r\n+OK\r\n");
  EXPECT_EQ(c.Command("GET", "k3"), "$1\r\nv\r\n") << "still in database 3";
  EXPECT_EQ(f.others[0]->Command("GET", "k3"), "$-1\r\n") << "database 0";
}

// POST / and /multi-exec with a script that never ends; then a pipeline with one, whose
// other commands are answered around it.
TEST_P(ScriptExecBusy, RestScriptThenScriptKill) {
  ExecBusyFixture f(GetParam());
  const std::string killed = R"({"error":"ERR Script killed by user with SCRIPT KILL... script: )"
                             R"(694a5fe1ddb97a4c6a1bf299d9537c7d3d0f84e7, on @user_script:1."})";
  struct Case {
    std::string target, body;
    int status;
    std::string answer;
  };
  const std::vector<Case> cases = {
      {"/", R"(["EVAL","while true do end","0"])", 400, killed},
      {"/multi-exec", R"([["SET","a","1"],["EVAL","while true do end","0"]])", 200,
       R"([{"result":"OK"},)" + killed + "]"},
      {"/pipeline", R"([["SET","a","2"],["EVAL","while true do end","0"],["GET","a"]])", 200,
       R"([{"result":"OK"},)" + killed + R"(,{"result":"2"}])"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.target);
    auto answer = std::async(std::launch::async, [&f, &c] {
      HttpConnection http(f.rest.port(), std::chrono::seconds(20));
      return http.Request("POST", c.target, c.body, {kRestAuth});
    });
    ASSERT_TRUE(f.WaitUntilBusy(answer));
    f.ExpectEveryoneBusy();
    EXPECT_EQ(f.others[1]->Command("SCRIPT", "KILL"), "+OK\r\n");
    ASSERT_EQ(answer.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    const HttpResponse r = answer.get();
    EXPECT_EQ(r.status, c.status);
    EXPECT_EQ(r.body, c.answer);
    f.ExpectEveryoneServed();
  }
}

// A REST request with a script that arrives while another script is busy: refused as on a
// busy Redis (BUSY for the script, EXECABORT for a transaction), its other commands run.
TEST_P(ScriptExecBusy, RestScriptWhileBusyIsRefused) {
  ExecBusyFixture f(GetParam());
  auto exec = std::async(std::launch::async,
                         [&f] { return f.runner.Command("EVAL", kEndlessScript, "0"); });
  ASSERT_TRUE(f.WaitUntilBusy(exec));
  HttpResponse r = f.rest.Post("/", R"(["EVAL","return 1","0"])");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body,
            R"({"error":"BUSY Redis is busy running a script. You can only call SCRIPT KILL or )"
            R"(SHUTDOWN NOSAVE."})");
  r = f.rest.Post("/multi-exec", R"([["EVAL","return 1","0"]])");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body,
            R"({"error":"EXECABORT Transaction discarded because of: BUSY Redis is busy running a )"
            R"(script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."})");
  r = f.rest.Post("/pipeline", R"([["EVAL","return 1","0"],["SCRIPT","KILL"]])");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body,
            R"([{"error":"BUSY Redis is busy running a script. You can only call SCRIPT KILL or )"
            R"(SHUTDOWN NOSAVE."},{"result":"OK"}])");
  ASSERT_EQ(exec.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_EQ(exec.get(), kKilledError);
  EXPECT_EQ(f.rest.Post("/", R"(["EVAL","return 1","0"])").body, R"({"result":1})");
}

INSTANTIATE_TEST_SUITE_P(IoThreads, ScriptExecBusy, ::testing::Values(1, 2),
                         [](const auto& info) { return "io" + std::to_string(info.param); });

}  // namespace
}  // namespace latch::test
