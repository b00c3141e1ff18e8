// Under appendfsync always, no reply makes a key visible to its client before the key's
// journal record is on disk, whichever path wrote it: SET NX, LOCK.ACQUIRE, LOCK.EXTEND, a
// native lock script, EXEC, Lua (EVAL, EVALSHA, on the script thread), a command postponed by
// CLIENT PAUSE and run at CLIENT UNPAUSE, and the REST endpoint. The journal thread is stopped
// before it writes the write's record (TEST.FAULT STALL journal-write: a disk that does not
// answer) and the server killed there: the client must have been told nothing. Then the same
// write again, the disk let go: the moment the client is told, a kill -9 must not lose it.
//
// Threads: one io thread, so the observer's commands run on the thread that serves the client
// and are answered after whatever that thread had to send for it before.
#include <gtest/gtest.h>

#include <functional>
#include <ostream>
#include <string>

#include "durability/latchd_child.h"
#include "durability/stall_kill.h"
#include "scripting/native_scripts.h"
#include "support/free_port.h"
#include "support/http_connection.h"
#include "support/raw_connection.h"

namespace latch::test {
namespace {

constexpr const char* kLuaSetNx = "return redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', 60000)";

std::string RedlockAcquire() {
  for (const auto& s : scripting::KnownScripts()) {
    if (s.kind == scripting::NativeKind::kRedlockAcquire) return std::string(s.body);
  }
  return "";
}

// One way to write key `key`: what runs before the disk stops, the write itself (sent on `x`;
// the observer `c` may take part), what the observer waits for before the kill, and what the
// client is answered on success.
struct WritePath {
  const char* name;
  std::function<void(RawConnection& x, RawConnection& c, const std::string& key)> prepare;
  std::function<void(RawConnection& x, RawConnection& c, const std::string& key)> write;
  std::vector<std::string> settled;  // a command whose reply holds settled_part, or empty
  std::string settled_part;
  std::string success;
  // After the restart: the key as the write left it.
  std::function<void(RawConnection& c, const std::string& key)> check;
};

void Nothing(RawConnection&, RawConnection&, const std::string&) {}

void Send(RawConnection& x, const std::vector<std::string>& args) {
  ASSERT_TRUE(x.Send(RawConnection::Encode(args))) << x.error();
}

void HasValue(RawConnection& c, const std::string& key, const std::string& value) {
  EXPECT_EQ(c.Command("GET", key), "$" + std::to_string(value.size()) + "\r\n" + value + "\r\n")
      << key;
}

std::function<void(RawConnection&, const std::string&)> ValueIs(const std::string& v) {
  return [v](RawConnection& c, const std::string& key) { HasValue(c, key, v); };
}

// The writes run by the client's own thread.
std::vector<WritePath> OwnThreadPaths() {
  return {{"SetNx",
           Nothing,
           [](RawConnection& x, RawConnection&, const std::string& key) {
             Send(x, {"SET", key, "v", "NX", "PX", "60000"});
           },
           {},
           "",
           "+OK\r\n",
           ValueIs("v")},
          {"LockAcquire",
           Nothing,
           [](RawConnection& x, RawConnection&, const std::string& key) {
             Send(x, {"LOCK.ACQUIRE", key, "owner", "60000"});
           },
           {},
           "",
           ":",
           ValueIs("owner")},
          {"LockExtend",
           [](RawConnection& x, RawConnection&, const std::string& key) {
             EXPECT_EQ(x.Command("LOCK.ACQUIRE", key, "owner", "10000").substr(0, 1), ":");
           },
           [](RawConnection& x, RawConnection&, const std::string& key) {
             Send(x, {"LOCK.EXTEND", key, "owner", "600000"});
           },
           {},
           "",
           ":1\r\n",
           [](RawConnection& c, const std::string& key) {
             const std::string pttl = c.Command("PTTL", key);
             ASSERT_EQ(pttl.substr(0, 1), ":") << pttl;
             EXPECT_GT(std::stoll(pttl.substr(1)), 60000) << "the extension is lost";
           }},
          {"NativeScript",
           Nothing,
           [](RawConnection& x, RawConnection&, const std::string& key) {
             Send(x, {"EVAL", RedlockAcquire(), "1", key, "owner", "60000"});
           },
           {},
           "",
           ":1\r\n",
           ValueIs("owner")},
          {"Exec",
           [](RawConnection& x, RawConnection&, const std::string& key) {
             EXPECT_EQ(x.Command("MULTI"), "+OK\r\n");
             EXPECT_EQ(x.Command("SET", key, "v", "NX", "PX", "60000"), "+QUEUED\r\n");
           },
           [](RawConnection& x, RawConnection&, const std::string&) { Send(x, {"EXEC"}); },
           {},
           "",
           "*1\r\n+OK\r\n",
           ValueIs("v")}};
}

// The writes whose reply another thread hands to the client's thread, or that the client's
// thread runs when it is unparked.
std::vector<WritePath> HandedBackPaths() {
  return {
      // The script thread records the call before it hands the reply to the client's thread.
      {"Eval",
       Nothing,
       [](RawConnection& x, RawConnection&, const std::string& key) {
         Send(x, {"EVAL", kLuaSetNx, "1", key, "v"});
       },
       {"INFO", "commandstats"},
       "cmdstat_eval:calls=1,",
       "+OK\r\n",
       ValueIs("v")},
      {"Evalsha",
       [](RawConnection& x, RawConnection&, const std::string&) {
         EXPECT_EQ(x.Command("SCRIPT", "LOAD", kLuaSetNx).substr(0, 3), "$40");
       },
       [](RawConnection& x, RawConnection& c, const std::string& key) {
         const std::string sha = c.Command("SCRIPT", "LOAD", kLuaSetNx).substr(5, 40);
         Send(x, {"EVALSHA", sha, "1", key, "v"});
       },
       {"INFO", "commandstats"},
       "cmdstat_evalsha:calls=1,",
       "+OK\r\n",
       ValueIs("v")},
      // Postponed by a pause, run by the client's thread when the pause ends.
      {"ClientUnpause",
       [](RawConnection& x, RawConnection& c, const std::string& key) {
         EXPECT_EQ(c.Command("CLIENT", "PAUSE", "60000", "WRITE"), "+OK\r\n");
         Send(x, {"SET", key, "v", "NX", "PX", "60000"});
         EXPECT_TRUE(WaitForReply(c, {"CLIENT", "LIST"}, "flags=b "));
       },
       [](RawConnection&, RawConnection& c, const std::string&) {
         EXPECT_EQ(c.Command("CLIENT", "UNPAUSE"), "+OK\r\n");
       },
       {},
       "",
       "+OK\r\n",
       ValueIs("v")},
  };
}

void PrintTo(const WritePath& path, std::ostream* os) { *os << path.name; }

class DurableReplyTest : public ::testing::TestWithParam<WritePath> {};

TEST_P(DurableReplyTest, NoReplyBeforeItsRecordIsOnDisk) {
  const WritePath& path = GetParam();
  std::vector<std::string> args = JournalWithTestCommands("always");
  args.insert(args.end(), {"--io-threads", "1"});
  LatchdChild s(args);
  ASSERT_TRUE(s.Start()) << s.Log();
  ASSERT_NE(s.Log().find("io-threads=1"), std::string::npos) << s.Log();
  // Round 0: killed while the disk holds the write back. Round 1: the disk let go.
  std::string told[2];
  for (int round = 0; round < 2; ++round) {
    const std::string key = "k" + std::to_string(round);
    {
      RawConnection c(s.port());
      RawConnection x(s.port());
      ASSERT_NO_FATAL_FAILURE(path.prepare(x, c, key));
      EXPECT_EQ(c.Command("TEST.FAULT", "STALL", "journal-write", "30000"), ":1\r\n");
      ASSERT_NO_FATAL_FAILURE(path.write(x, c, key));
      ASSERT_TRUE(WaitStalled(c));
      if (!path.settled.empty()) {
        EXPECT_TRUE(WaitForReply(c, path.settled, path.settled_part));
      }
      EXPECT_EQ(c.Command("PING"), "+PONG\r\n");  // after whatever the thread sent before
      if (round == 1) {
        EXPECT_EQ(c.Command("TEST.FAULT", "RESUME"), "+OK\r\n");
        const std::optional<std::string> reply = x.ReadReply();
        ASSERT_TRUE(reply) << x.error();
        told[round] = *reply;
        ASSERT_EQ(told[round].substr(0, path.success.size()), path.success) << told[round];
      }
      s.Kill9();
      if (round == 0) told[round] = Collect(x);
    }
    ASSERT_TRUE(s.Start()) << s.Log();
    RawConnection c(s.port());
    if (!told[round].empty()) {
      SCOPED_TRACE("told " + told[round] + " before kill -9");
      path.check(c, key);
    }
  }
  EXPECT_EQ(told[0], "") << "a reply left before its journal record was written";
}

std::vector<WritePath> Paths() {
  std::vector<WritePath> all = OwnThreadPaths();
  for (WritePath& p : HandedBackPaths()) all.push_back(std::move(p));
  return all;
}

INSTANTIATE_TEST_SUITE_P(Paths, DurableReplyTest, ::testing::ValuesIn(Paths()),
                         [](const auto& info) { return std::string(info.param.name); });

// The REST endpoint, as a RESP client above: raw HTTP bytes, so that whatever the server sent
// before it died is seen.
TEST(DurableRestReplyTest, AnswerWaitsForItsRecord) {
  const int rest_port = FreePort();
  std::vector<std::string> args = JournalWithTestCommands("always");
  args.insert(args.end(),
              {"--io-threads", "1", "--rest-port", std::to_string(rest_port), "--rest-token", "t"});
  LatchdChild s(args);
  ASSERT_TRUE(s.Start()) << s.Log();
  const std::vector<std::string> auth = {"Authorization: Bearer t"};
  std::string told;
  {
    RawConnection c(s.port());
    RawConnection x(rest_port);
    EXPECT_EQ(c.Command("TEST.FAULT", "STALL", "journal-write", "30000"), ":1\r\n");
    ASSERT_TRUE(x.Send(HttpRequestBytes("POST", "/", R"(["SET","k0","v","NX"])", auth)));
    ASSERT_TRUE(WaitStalled(c));
    EXPECT_EQ(c.Command("PING"), "+PONG\r\n");
    s.Kill9();
    told = Collect(x);
  }
  ASSERT_TRUE(s.Start()) << s.Log();
  {
    RawConnection c(s.port());
    if (!told.empty()) {
      HasValue(c, "k0", "v");
    }
    EXPECT_EQ(told, "") << "an answer left before its journal record was written";
    EXPECT_EQ(c.Command("TEST.FAULT", "STALL", "journal-write", "30000"), ":1\r\n");
    HttpConnection x(rest_port);
    ASSERT_TRUE(x.Send(HttpRequestBytes("POST", "/", R"(["SET","k1","v","NX"])", auth)));
    ASSERT_TRUE(WaitStalled(c));
    EXPECT_EQ(c.Command("TEST.FAULT", "RESUME"), "+OK\r\n");
    const std::optional<HttpResponse> r = x.Read();
    ASSERT_TRUE(r) << x.error();
    EXPECT_EQ(r->body, R"({"result":"OK"})");
    s.Kill9();
  }
  ASSERT_TRUE(s.Start()) << s.Log();
  RawConnection c(s.port());
  HasValue(c, "k1", "v");
}

}  // namespace
}  // namespace latch::test
