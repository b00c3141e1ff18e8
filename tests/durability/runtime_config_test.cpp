// The journal's directives at run time, against the latchd binary, as Redis 7.0 allows them:
// CONFIG SET appendonly yes starts the journal with a base written from the live keyspace,
// appendonly no stops it; appendfsync and the other mutable AOF directives apply at once;
// appenddirname and appendfilename stay immutable.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "durability/latchd_child.h"
#include "support/raw_connection.h"

namespace latch::test {
namespace {

// CONFIG SET dir needs enable-protected-configs, as in Redis 7.0.
std::vector<std::string> AlwaysWithProtectedConfigs() {
  std::vector<std::string> args = AppendfsyncAlways();
  args.insert(args.end(), {"--enable-protected-configs", "yes"});
  return args;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::string CheckAof(const LatchdChild& s) {
  std::string out;
  const int rc = RunCommand("redis-check-aof " + s.aof_dir() + "/appendonly.aof.manifest", &out);
  return rc == 0 ? std::string() : out;
}

// Redis's way to turn AOF on in a running server: what was in memory before is in the new
// journal's base, what comes after in its incremental file; a kill -9 then loses nothing.
TEST(RuntimeConfigTest, AppendonlyYesJournalsTheLiveKeyspaceAndLaterWrites) {
  LatchdChild s({"--appendfsync", "always"});
  ASSERT_TRUE(s.Start()) << s.Log();
  std::string token;
  {
    RawConnection c(s.port());
    for (int i = 0; i < 500; ++i) {
      ASSERT_EQ(c.Command("SET", "before:" + std::to_string(i), "v", "PX", "600000"), "+OK\r\n");
    }
    token = c.Command("LOCK.ACQUIRE", "fenced", "owner", "600000");
    ASSERT_EQ(token[0], ':') << token;
    EXPECT_NE(c.Command("INFO", "persistence").find("aof_enabled:0"), std::string::npos);
    EXPECT_EQ(c.Command("CONFIG", "SET", "appendonly", "yes"), "+OK\r\n");
    EXPECT_EQ(c.Command("CONFIG", "GET", "appendonly"), "*2\r\n$10\r\nappendonly\r\n$3\r\nyes\r\n");
    EXPECT_NE(c.Command("INFO", "persistence").find("aof_enabled:1"), std::string::npos);
    EXPECT_EQ(c.Command("SET", "after", "x"), "+OK\r\n");
  }
  ASSERT_TRUE(WaitForInfo(s.port(), "aof_rewrite_in_progress:0")) << s.Log();
  {
    RawConnection c(s.port());
    EXPECT_EQ(c.Command("SET", "after-base", "y", "NX", "PX", "600000"), "+OK\r\n");
  }
  s.Kill9();
  EXPECT_EQ(CheckAof(s), "");
  s.set_args(AppendfsyncAlways());
  ASSERT_TRUE(s.Start()) << s.Log();
  RawConnection c(s.port());
  EXPECT_EQ(c.Command("DBSIZE"), ":503\r\n");
  EXPECT_EQ(c.Command("GET", "before:499"), "$1\r\nv\r\n");
  EXPECT_EQ(c.Command("MGET", "after", "after-base"), "*2\r\n$1\r\nx\r\n$1\r\ny\r\n");
  EXPECT_EQ(c.Command("LOCK.ACQUIRE", "fenced", "thief", "1000"), "$-1\r\n");
  const std::string next = c.Command("LOCK.ACQUIRE", "other", "owner", "1000");
  ASSERT_EQ(next[0], ':') << next;
  EXPECT_GT(std::stoull(next.substr(1)), std::stoull(token.substr(1)));
}

// appendonly no: writes after it are not journaled; the journal on disk keeps what was
// written before. yes again: a new base from memory replaces the old files.
TEST(RuntimeConfigTest, AppendonlyNoStopsTheJournalAndYesStartsItAgain) {
  LatchdChild s(AppendfsyncAlways());
  ASSERT_TRUE(s.Start()) << s.Log();
  {
    RawConnection c(s.port());
    EXPECT_EQ(c.Command("SET", "a", "1"), "+OK\r\n");
    EXPECT_EQ(c.Command("CONFIG", "SET", "appendonly", "no"), "+OK\r\n");
    EXPECT_NE(c.Command("INFO", "persistence").find("aof_enabled:0"), std::string::npos);
    EXPECT_EQ(c.Command("BGREWRITEAOF").substr(0, 4), "-ERR");
    EXPECT_EQ(c.Command("SET", "b", "2"), "+OK\r\n");
    EXPECT_EQ(c.Command("CONFIG", "SET", "appendonly", "no"), "+OK\r\n");  // already off
  }
  s.Kill9();
  ASSERT_TRUE(s.Start()) << s.Log();
  {
    RawConnection c(s.port());
    EXPECT_EQ(c.Command("MGET", "a", "b"), "*2\r\n$1\r\n1\r\n$-1\r\n");
    EXPECT_EQ(c.Command("CONFIG", "SET", "appendonly", "no"), "+OK\r\n");
    EXPECT_EQ(c.Command("SET", "b", "2"), "+OK\r\n");
    EXPECT_EQ(c.Command("DEL", "a"), ":1\r\n");
    EXPECT_EQ(c.Command("CONFIG", "SET", "appendonly", "yes"), "+OK\r\n");
    EXPECT_EQ(c.Command("SET", "c", "3"), "+OK\r\n");
  }
  ASSERT_TRUE(WaitForInfo(s.port(), "aof_rewrite_in_progress:0")) << s.Log();
  s.Kill9();
  EXPECT_EQ(CheckAof(s), "");
  // The old base and incremental files are gone: one base, one incremental file.
  std::size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(s.aof_dir())) {
    files += e.path().extension() == ".aof" ? 1 : 0;
  }
  EXPECT_EQ(files, 2u);
  ASSERT_TRUE(s.Start()) << s.Log();
  RawConnection c(s.port());
  EXPECT_EQ(c.Command("MGET", "a", "b", "c"), "*3\r\n$-1\r\n$1\r\n2\r\n$1\r\n3\r\n");
}

// Inside EXEC (which holds every shard), while the base of a just-enabled journal is being
// written: turning it off neither deadlocks nor loses the transaction's replies; on again too.
TEST(RuntimeConfigTest, AppendonlyInsideExecDuringTheFirstBase) {
  LatchdChild s({"--appendfsync", "always"});
  ASSERT_TRUE(s.Start()) << s.Log();
  RawConnection c(s.port());
  std::string batch;
  constexpr int kKeys = 20000;
  for (int i = 0; i < kKeys; ++i) {
    batch += RawConnection::Encode({"SET", "k" + std::to_string(i), "v"});
  }
  ASSERT_TRUE(c.Send(batch));
  for (int i = 0; i < kKeys; ++i) ASSERT_EQ(c.ReadReply(), "+OK\r\n") << i;
  for (const char* first : {"yes", "no"}) {
    const char* second = std::string(first) == "yes" ? "no" : "yes";
    EXPECT_EQ(c.Command("CONFIG", "SET", "appendonly", first), "+OK\r\n");
    EXPECT_EQ(c.Command("MULTI"), "+OK\r\n");
    EXPECT_EQ(c.Command("CONFIG", "SET", "appendonly", second), "+QUEUED\r\n");
    EXPECT_EQ(c.Command("SET", "in-exec", second), "+QUEUED\r\n");
    EXPECT_EQ(c.Command("EXEC"), "*2\r\n+OK\r\n+OK\r\n");
  }
  ASSERT_TRUE(WaitForInfo(s.port(), "aof_rewrite_in_progress:0")) << s.Log();
  EXPECT_NE(c.Command("INFO", "persistence").find("aof_enabled:1"), std::string::npos);
  EXPECT_EQ(c.Command("SET", "last", "x"), "+OK\r\n");
  s.Kill9();
  EXPECT_EQ(CheckAof(s), "");
  s.set_args(AppendfsyncAlways());
  ASSERT_TRUE(s.Start()) << s.Log();
  RawConnection d(s.port());
  EXPECT_EQ(d.Command("DBSIZE"), ":" + std::to_string(kKeys + 2) + "\r\n");
  EXPECT_EQ(d.Command("GET", "in-exec"), "$3\r\nyes\r\n");
}

// appendfsync, auto-aof-rewrite-*, aof-load-truncated and aof-timestamp-enabled are mutable
// in Redis 7.0 and take effect at once; appenddirname and appendfilename are not.
TEST(RuntimeConfigTest, MutableAofDirectivesApplyAtOnce) {
  LatchdChild s({"--appendonly", "yes", "--appendfsync", "no"});
  ASSERT_TRUE(s.Start()) << s.Log();
  RawConnection c(s.port());
  for (const char* v : {"everysec", "always"}) {
    EXPECT_EQ(c.Command("CONFIG", "SET", "appendfsync", v), "+OK\r\n");
    EXPECT_EQ(
        c.Command("CONFIG", "GET", "appendfsync"),
        "*2\r\n$11\r\nappendfsync\r\n$" + std::to_string(std::strlen(v)) + "\r\n" + v + "\r\n");
  }
  EXPECT_EQ(c.Command("CONFIG", "SET", "appendfsync", "sometimes"),
            "-ERR CONFIG SET failed (possibly related to argument 'appendfsync') - argument(s) "
            "must be one of the following: everysec, always, no\r\n");
  EXPECT_EQ(c.Command("CONFIG", "SET", "aof-load-truncated", "no"), "+OK\r\n");
  EXPECT_EQ(c.Command("CONFIG", "SET", "auto-aof-rewrite-percentage", "0"), "+OK\r\n");
  EXPECT_EQ(c.Command("CONFIG", "SET", "auto-aof-rewrite-min-size", "1mb"), "+OK\r\n");
  EXPECT_EQ(c.Command("CONFIG", "GET", "auto-aof-rewrite-min-size"),
            "*2\r\n$25\r\nauto-aof-rewrite-min-size\r\n$7\r\n1048576\r\n");
  for (const char* name : {"appenddirname", "appendfilename"}) {
    EXPECT_EQ(c.Command("CONFIG", "SET", name, "x"),
              std::string("-ERR CONFIG SET failed (possibly related to argument '") + name +
                  "') - can't set immutable config\r\n");
  }
  // The very next record carries Redis's "#TS:" annotation, and it was synced before the reply
  // (appendfsync always applied at once): kill -9 right after it keeps it.
  EXPECT_EQ(c.Command("CONFIG", "SET", "aof-timestamp-enabled", "yes"), "+OK\r\n");
  EXPECT_EQ(c.Command("SET", "stamped", "1"), "+OK\r\n");
  s.Kill9();
  const std::string incr = ReadAll(s.aof_dir() + "/appendonly.aof.1.incr.aof");
  EXPECT_NE(incr.find("#TS:"), std::string::npos) << incr;
  EXPECT_NE(incr.find("stamped"), std::string::npos) << incr;
  EXPECT_EQ(CheckAof(s), "");
}

// CONFIG SET appendonly yes answers once the journal is open and named by the manifest: an
// acquire acknowledged right after it survives kill -9, whether the base from memory was
// written by then (even rounds) or not (odd rounds: the crash may come in the middle of it).
TEST(RuntimeConfigTest, GrantRightAfterAppendonlyYesSurvivesKill9) {
  LatchdChild s({"--appendfsync", "always"});
  for (int round = 0; round < 4; ++round) {
    s.set_args({"--appendfsync", "always"});  // starts empty: the journal is not read
    ASSERT_TRUE(s.Start()) << s.Log();
    std::string token;
    {
      RawConnection c(s.port());
      EXPECT_EQ(c.Command("SET", "pre", "1"), "+OK\r\n");
      EXPECT_EQ(c.Command("CONFIG", "SET", "appendonly", "yes"), "+OK\r\n");
      if (round % 2 == 0) {
        ASSERT_TRUE(WaitForInfo(s.port(), "aof_rewrite_in_progress:0")) << s.Log();
      }
      EXPECT_EQ(c.Command("SET", "nx", "holder", "NX", "PX", "600000"), "+OK\r\n");
      token = c.Command("LOCK.ACQUIRE", "fenced", "holder", "600000");
      ASSERT_EQ(token[0], ':') << token;
    }
    s.Kill9();
    s.set_args(AppendfsyncAlways());
    ASSERT_TRUE(s.Start()) << s.Log();
    {
      RawConnection c(s.port());
      EXPECT_EQ(c.Command("GET", "nx"), "$6\r\nholder\r\n") << round;
      EXPECT_EQ(c.Command("LOCK.ACQUIRE", "fenced", "thief", "1000"), "$-1\r\n") << round;
      if (round % 2 == 0) {
        EXPECT_EQ(c.Command("GET", "pre"), "$1\r\n1\r\n") << round;
      }
    }
    s.Kill9();
  }
}

// CONFIG SET dir, as Redis 7.0 (with enable-protected-configs): a chdir, with chdir's reason
// when it cannot; CONFIG GET dir shows the new working directory.
// As Redis 7.0: `dir` is a protected config, refused unless enable-protected-configs allows
// the client (yes, or local for loopback and Unix-socket clients); the directive itself is
// immutable at run time. Fails on the old code, which accepted CONFIG SET dir from anyone.
TEST(RuntimeConfigTest, ConfigSetDirIsProtectedAsInRedis) {
  const std::string refused =
      "-ERR CONFIG SET failed (possibly related to argument 'dir') - can't set protected "
      "config\r\n";
  LatchdChild s(AppendfsyncAlways());
  ASSERT_TRUE(s.Start()) << s.Log();
  {
    RawConnection c(s.port());
    EXPECT_EQ(c.Command("CONFIG", "SET", "dir", s.dir()), refused);
    EXPECT_EQ(c.Command("CONFIG", "SET", "maxmemory", "0", "dir", s.dir()), refused);
    EXPECT_EQ(c.Command("CONFIG", "GET", "enable-protected-configs"),
              "*2\r\n$24\r\nenable-protected-configs\r\n$2\r\nno\r\n");
    EXPECT_EQ(c.Command("CONFIG", "SET", "enable-protected-configs", "yes"),
              "-ERR CONFIG SET failed (possibly related to argument 'enable-protected-configs') - "
              "can't set immutable config\r\n");
  }
  s.Stop();
  std::vector<std::string> local = AppendfsyncAlways();
  local.insert(local.end(), {"--enable-protected-configs", "local"});
  s.set_args(local);
  ASSERT_TRUE(s.Start()) << s.Log();
  RawConnection c(s.port());
  EXPECT_EQ(c.Command("CONFIG", "GET", "enable-protected-configs"),
            "*2\r\n$24\r\nenable-protected-configs\r\n$5\r\nlocal\r\n");
  EXPECT_EQ(c.Command("CONFIG", "SET", "dir", s.dir()), "+OK\r\n") << "127.0.0.1 is local";
}

TEST(RuntimeConfigTest, ConfigSetDirRefusesWhatChdirRefuses) {
  LatchdChild s(AlwaysWithProtectedConfigs());
  ASSERT_TRUE(s.Start()) << s.Log();
  RawConnection c(s.port());
  const std::string failed = "-ERR CONFIG SET failed (possibly related to argument 'dir') - ";
  EXPECT_EQ(c.Command("CONFIG", "SET", "dir", s.dir() + "/missing"),
            failed + "No such file or directory\r\n");
  std::ofstream(s.dir() + "/plain") << "x";
  EXPECT_EQ(c.Command("CONFIG", "SET", "dir", s.dir() + "/plain"), failed + "Not a directory\r\n");
  const std::string here = c.Command("CONFIG", "GET", "dir");
  EXPECT_NE(here.find(s.dir() + "\r\n"), std::string::npos) << here;
  std::filesystem::create_directory(s.dir() + "/next");
  EXPECT_EQ(c.Command("CONFIG", "SET", "dir", s.dir() + "/next"), "+OK\r\n");
  const std::string next = s.dir() + "/next";
  EXPECT_EQ(c.Command("CONFIG", "GET", "dir"),
            "*2\r\n$3\r\ndir\r\n$" + std::to_string(next.size()) + "\r\n" + next + "\r\n");
}

// The open journal keeps its file (and its promise: an acknowledged write survives kill -9)
// until the next rewrite, which moves the journal into <new dir>/appendonlydir, as Redis's.
TEST(RuntimeConfigTest, ConfigSetDirMovesTheJournalAtTheNextRewrite) {
  LatchdChild s(AlwaysWithProtectedConfigs());
  ASSERT_TRUE(s.Start()) << s.Log();
  const std::string next = s.dir() + "/next";
  std::filesystem::create_directory(next);
  RawConnection c(s.port());
  EXPECT_EQ(c.Command("SET", "before", "1"), "+OK\r\n");
  EXPECT_EQ(c.Command("CONFIG", "SET", "dir", next), "+OK\r\n");
  EXPECT_EQ(c.Command("SET", "between", "2"), "+OK\r\n");
  EXPECT_FALSE(std::filesystem::exists(next + "/appendonlydir"));
  EXPECT_NE(ReadAll(s.aof_dir() + "/appendonly.aof.1.incr.aof").find("between"), std::string::npos);
  EXPECT_EQ(c.Command("BGREWRITEAOF").substr(0, 1), "+");
  ASSERT_TRUE(WaitForInfo(s.port(), "aof_rewrite_in_progress:0")) << s.Log();
  EXPECT_NE(c.Command("INFO", "persistence").find("aof_last_bgrewrite_status:ok"),
            std::string::npos);
  EXPECT_EQ(c.Command("SET", "after", "3"), "+OK\r\n");
  s.Kill9();
  std::string out;
  EXPECT_EQ(RunCommand("redis-check-aof " + next + "/appendonlydir/appendonly.aof.manifest", &out),
            0)
      << out;
  // Restarted in the new directory: everything, the writes after the move included.
  s.set_args({"--appendonly", "yes", "--dir", next});
  ASSERT_TRUE(s.Start()) << s.Log();
  RawConnection d(s.port());
  EXPECT_EQ(d.Command("MGET", "before", "between", "after"),
            "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n");
}

// A directory chdir accepts but the rewrite cannot use (its appendonlydir is a plain file):
// the rewrite fails as Redis's does, the journal stays where it was and keeps its promise.
TEST(RuntimeConfigTest, ConfigSetDirToAnUnusableDirectoryKeepsTheJournal) {
  LatchdChild s(AlwaysWithProtectedConfigs());
  ASSERT_TRUE(s.Start()) << s.Log();
  const std::string bad = s.dir() + "/bad";
  std::filesystem::create_directory(bad);
  std::ofstream(bad + "/appendonlydir") << "not a directory";
  RawConnection c(s.port());
  EXPECT_EQ(c.Command("CONFIG", "SET", "dir", bad), "+OK\r\n");
  EXPECT_EQ(c.Command("BGREWRITEAOF").substr(0, 1), "+");
  ASSERT_TRUE(WaitForInfo(s.port(), "aof_last_bgrewrite_status:err")) << s.Log();
  ASSERT_TRUE(WaitForInfo(s.port(), "aof_rewrite_in_progress:0")) << s.Log();
  EXPECT_EQ(c.Command("SET", "kept", "1"), "+OK\r\n");
  s.Kill9();
  s.set_args(AppendfsyncAlways());
  ASSERT_TRUE(s.Start()) << s.Log();
  RawConnection d(s.port());
  EXPECT_EQ(d.Command("GET", "kept"), "$1\r\n1\r\n");
}

}  // namespace
}  // namespace latch::test
