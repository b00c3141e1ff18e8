// redis.conf as it is: Redis 7.0's directives that latchd ignores are accepted with Redis's
// value checks, the ones it implements for running as a service parse, and the pieces of
// start-up that need no process (the log file sink, the sd_notify datagram). Expected reasons
// are redis-server 7.0.15's (run with the same argument).
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "config/config_directives.h"
#include "config/config_parser.h"
#include "config/ignored_directives.h"
#include "config/log_file_sink.h"
#include "config/log_setup.h"
#include "service/systemd_notify.h"

namespace latch::config {
namespace {

namespace fs = std::filesystem;

// A directory of its own per test, removed at scope exit.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::temp_directory_path() /
            ("latch_redis_conf_test_" + std::to_string(::getpid()) + "_" + info->name());
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  fs::path operator/(const std::string& name) const { return path_ / name; }
  std::string str() const { return path_.string(); }

 private:
  fs::path path_;
};

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The reason a one-line file is refused with ("" when it is accepted).
std::string ReasonFor(const std::string& line) {
  Options o;
  try {
    ApplyConfigText(line + "\n", "the configuration file 'test.conf'", o);
  } catch (const ConfigError& e) {
    return e.reason();
  }
  return "";
}

Options FromLines(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  Options o;
  ApplyConfigText(text, "the configuration file 'test.conf'", o);
  return o;
}

TEST(RedisConfTest, DebiansRedisConfLoadsAndListsWhatIsIgnored) {
  // Installed by Debian's redis-server package (scripts/deps.sh installs it for the tests).
  const fs::path stock = "/etc/redis/redis.conf";
  const std::string text = ReadAll(stock);
  ASSERT_FALSE(text.empty()) << "cannot read " << stock << ": install redis-server";
  Options o;
  std::vector<std::string> ignored;
  ApplyConfigText(text, "the configuration file '/etc/redis/redis.conf'", o, &ignored);
  EXPECT_EQ(o.port, 6379);
  EXPECT_EQ(o.bind, "127.0.0.1 -::1");
  EXPECT_TRUE(o.protected_mode);
  EXPECT_TRUE(o.daemonize);
  EXPECT_EQ(o.pidfile, "/run/redis/redis-server.pid");
  EXPECT_EQ(o.logfile, "/var/log/redis/redis-server.log");
  EXPECT_EQ(o.tcp_backlog, 511);
  EXPECT_EQ(o.tcp_keepalive, 300);
  EXPECT_EQ(o.databases, 16);  // implemented since issue 17
  // Each ignored directive once.
  for (const char* name : {"rdbcompression", "stop-writes-on-bgsave-error",
                           "lazyfree-lazy-eviction", "repl-diskless-sync"}) {
    EXPECT_EQ(std::count(ignored.begin(), ignored.end(), name), 1) << name;
  }
  for (const char* name : {"port", "bind", "daemonize", "protected-mode", "loglevel",
                           "client-output-buffer-limit", "appendfsync", "slowlog-max-len",
                           "slowlog-log-slower-than", "latency-monitor-threshold"}) {
    EXPECT_EQ(std::count(ignored.begin(), ignored.end(), name), 0) << name;
  }
}

TEST(RedisConfTest, IgnoredValuesAreStillCheckedWithRedisReasons) {
  const std::pair<const char*, const char*> cases[] = {
      {"rdbcompression maybe", "argument must be 'yes' or 'no'"},
      {"databases 0", "argument must be between 1 and 2147483647 inclusive"},
      {"databases x", "argument couldn't be parsed into an integer"},
      {"repl-backlog-size lots", "argument must be a memory value"},
      {"appendfsync sometimes", "argument(s) must be one of the following: everysec, always, no"},
      {"notify-keyspace-events Q", "Invalid event class character. Use 'Ag$lshzxeKEtmdn'."},
      {"oom-score-adj-values 1 2", "wrong number of arguments"},
      {"oom-score-adj-values 1 2 5000",
       "Invalid oom-score-adj-values, elements must be between -2000 and 2000."},
      {"client-output-buffer-limit normal 0 0",
       "Wrong number of arguments in buffer limit configuration."},
      {"client-output-buffer-limit master 0 0 0",
       "Invalid client class specified in buffer limit configuration."},
      {"latency-tracking-info-percentiles 200",
       "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]"},
      {"latency-tracking-info-percentiles x",
       "Invalid latency-tracking-info-percentiles parameters"},
      {"maxmemory-clients 200%", "percentage argument must be less or equal to 100"},
      {"maxmemory-clients x", "argument must be a memory or percent value"},
      {"unixsocketperm 999", "argument couldn't be parsed as an octal number"},
      {"dbfilename a/b", "dbfilename can't be a path, just a filename"},
      {"replicaof a", "wrong number of arguments"},
      {"daemonize yes yes", "wrong number of arguments"},
      {"syslog-facility x",
       "argument(s) must be one of the following: user, local0, local1, local2, local3, local4, "
       "local5, local6, local7"},
      {"supervised x", "argument(s) must be one of the following: upstart, systemd, auto, no"},
      {"tcp-backlog -1", "argument must be between 0 and 2147483647 inclusive"},
      {"dir /nonexistent-latch-dir", "No such file or directory"},
      {"dir /etc/passwd", "Not a directory"},
      {"bogus 1", "Bad directive or wrong number of arguments"},
  };
  for (const auto& [line, reason] : cases) EXPECT_EQ(ReasonFor(line), reason) << line;
  // Valid values of Redis's are accepted, in any case.
  for (const char* line :
       {"rdbcompression NO", "databases 16", "repl-backlog-size 1mb", "appendfsync Always",
        "notify-keyspace-events Ex", "oom-score-adj-values 0 200 800", "maxmemory-clients 10%",
        "client-output-buffer-limit normal 0 0 0 pubsub 32mb 8mb 60", "replicaof no one",
        "unixsocketperm 700", "lua-replicate-commands yes",
        "latency-tracking-info-percentiles 50 99 99.9", "slaveof NO ONE"}) {
    EXPECT_EQ(ReasonFor(line), "") << line;
  }
}

TEST(RedisConfTest, DirectivesThatWouldMisleadAreRefusedWithAReason) {
  for (const char* line :
       {"replicaof 10.0.0.1 6379", "cluster-enabled yes", "rename-command FLUSHALL \"\"",
        "loadmodule /x.so", "sentinel monitor m 127.0.0.1 6379 2"}) {
    const std::string reason = ReasonFor(line);
    EXPECT_FALSE(reason.empty()) << line;
    EXPECT_NE(reason, "Bad directive or wrong number of arguments") << line;
  }
}

TEST(RedisConfTest, EveryIgnoredDirectiveIsUnknownToTheImplementedTable) {
  for (const IgnoredDirective& d : IgnoredDirectives()) {
    EXPECT_EQ(FindConfigDirective(d.name), nullptr) << d.name << " is in both tables";
  }
}

// ACL users: each `user` line is kept in order (acl/acl_file.cpp checks the rules when the
// server starts, against the command table).
TEST(RedisConfTest, UserLinesAndAclfileAreKept) {
  TempDir dir;
  std::ofstream(dir / "users.conf") << "user alice on >pw ~lock:a:* +@lock\n"
                                    << "user bob off\naclfile /etc/latch/users.acl\n";
  const Options o =
      LoadOptions(2, std::vector<const char*>{"latchd", (dir / "users.conf").c_str()}.data());
  ASSERT_EQ(o.acl_users.size(), 2u);
  EXPECT_EQ(o.acl_users[0], "alice on >pw ~lock:a:* +@lock");
  EXPECT_EQ(o.acl_users[1], "bob off");
  EXPECT_EQ(o.aclfile, "/etc/latch/users.acl");
}

TEST(RedisConfTest, IncludeReadsAnotherFileInPlace) {
  TempDir dir;
  std::ofstream(dir / "inner.conf") << "port 7001\ntimeout 5\n";
  std::ofstream(dir / "outer.conf")
      << "port 7000\ninclude " << (dir / "inner.conf").string() << "\ntimeout 9\n";
  const Options o =
      LoadOptions(2, std::vector<const char*>{"latchd", (dir / "outer.conf").c_str()}.data());
  EXPECT_EQ(o.port, 7001);
  EXPECT_EQ(o.timeout, 9);
  // A file that includes itself stops with an error instead of recursing forever.
  std::ofstream(dir / "self.conf") << "include " << (dir / "self.conf").string() << "\n";
  Options ignored;
  EXPECT_THROW(ApplyConfigText(ReadAll(dir / "self.conf"), "x", ignored), ConfigError);
}

TEST(RedisConfTest, ServiceDirectivesParse) {
  TempDir dir;
  const Options o = FromLines({"supervised AUTO", "daemonize yes", "pidfile /run/x.pid",
                               "dir " + dir.str(), "syslog-enabled yes", "syslog-ident x",
                               "syslog-facility LOCAL7", "protected-mode no", "tcp-keepalive 0"});
  EXPECT_EQ(o.supervised, "auto");
  EXPECT_TRUE(o.daemonize);
  EXPECT_EQ(o.pidfile, "/run/x.pid");
  EXPECT_EQ(o.dir, dir.str());
  EXPECT_TRUE(o.syslog_enabled);
  EXPECT_EQ(o.syslog_ident, "x");
  EXPECT_EQ(o.syslog_facility, "local7");
  EXPECT_FALSE(o.protected_mode);
  EXPECT_EQ(o.tcp_keepalive, 0);
}

TEST(LogFileSinkTest, FollowsAMovedFileAndReopensOnRequest) {
  TempDir dir;
  const fs::path log = dir / "latchd.log";
  auto sink = std::make_shared<LogFileSink>(log.string());
  spdlog::logger logger("log_file_sink_test", sink);
  logger.set_pattern("%v");
  logger.info("first");
  // logrotate without copytruncate: rename, then the next line goes to a new file.
  fs::rename(log, dir / "latchd.log.1");
  logger.info("second");
  EXPECT_EQ(ReadAll(dir / "latchd.log.1"), "first\n");
  EXPECT_EQ(ReadAll(log), "second\n");
  // Reopen() (SIGHUP) reopens even when the path still names the file.
  sink->Reopen();
  logger.info("third");
  EXPECT_EQ(ReadAll(log), "second\nthird\n");
}

TEST(SystemdNotifyTest, SendsOneDatagramToNotifySocket) {
  TempDir dir;
  const std::string path = (dir / "notify.sock").string();
  const int fd = ::socket(AF_UNIX, SOCK_DGRAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof(address.sun_path) - 1);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  const service::SystemdNotifier notifier(path);
  ASSERT_TRUE(notifier.Notify("READY=1\nSTATUS=ok\n"));
  char buffer[256];
  const ssize_t n = ::recv(fd, buffer, sizeof(buffer), MSG_DONTWAIT);
  ::close(fd);
  ASSERT_GT(n, 0);
  EXPECT_EQ(std::string(buffer, static_cast<std::size_t>(n)), "READY=1\nSTATUS=ok\n");
  // No socket: nothing is sent, and a relative path is refused rather than guessed at.
  EXPECT_FALSE(service::SystemdNotifier("").Notify("READY=1\n"));
  EXPECT_FALSE(service::SystemdNotifier("relative.sock").Notify("READY=1\n"));
}

TEST(SystemdNotifyTest, AutoSupervisionFollowsTheEnvironment) {
  using service::ResolveSupervision;
  using service::Supervision;
  EXPECT_EQ(ResolveSupervision("systemd"), Supervision::kSystemd);
  EXPECT_EQ(ResolveSupervision("no"), Supervision::kNone);
  ::unsetenv("UPSTART_JOB");
  ::setenv("NOTIFY_SOCKET", "/run/systemd/notify", 1);
  EXPECT_EQ(ResolveSupervision("auto"), Supervision::kSystemd);
  ::unsetenv("NOTIFY_SOCKET");
  EXPECT_EQ(ResolveSupervision("auto"), Supervision::kNone);
}

}  // namespace
}  // namespace latch::config
