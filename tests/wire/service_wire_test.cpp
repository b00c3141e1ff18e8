// latchd as a service, run as a real process: started from Debian's stock redis.conf and from
// conf/latchd.conf, configuration errors compared with redis-server 7.0.15's, sd_notify to a
// real datagram socket standing in for systemd, daemonize with a pid file, the log file
// followed across logrotate, protected mode seen from a non-loopback address.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spdlog/logger.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "latch/server.h"
#include "support/eventually.h"
#include "support/free_port.h"
#include "support/raw_connection.h"
#include "support/sanitizer.h"
#include "support/server_process.h"
#include "support/shell.h"

namespace latch::test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::temp_directory_path() /
            ("latch_service_" + std::to_string(::getpid()) + "_" + info->name());
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }
  std::string str() const { return path_.string(); }

 private:
  fs::path path_;
};

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::size_t Count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

std::string LastLine(const std::string& text) {
  std::string trimmed = text;
  while (!trimmed.empty() && trimmed.back() == '\n') trimmed.pop_back();
  const std::size_t newline = trimmed.rfind('\n');
  return newline == std::string::npos ? trimmed : trimmed.substr(newline + 1);
}

// A datagram socket bound in `dir`: what systemd listens on for sd_notify.
class NotifySocket {
 public:
  explicit NotifySocket(std::string path) : path_(std::move(path)) {
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, path_.c_str(), sizeof(address.sun_path) - 1);
    bound_ = ::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  }
  ~NotifySocket() { ::close(fd_); }
  bool bound() const { return bound_; }
  const std::string& path() const { return path_; }
  // The next datagram, or "" after 5 s.
  std::string Receive() {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 5000) != 1) return "";
    char buffer[1024];
    const ssize_t n = ::recv(fd_, buffer, sizeof(buffer), 0);
    return n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : "";
  }

 private:
  std::string path_;
  int fd_ = -1;
  bool bound_ = false;
};

TEST(ServiceWireTest, StartsFromDebiansStockRedisConf) {
  TempDir dir;
  const std::string conf = dir / "redis.conf";
  std::error_code ec;
  fs::copy_file("/etc/redis/redis.conf", conf, ec);
  ASSERT_FALSE(ec) << "copy Debian's /etc/redis/redis.conf (redis-server package): "
                   << ec.message();
  // What the file names for Debian's own paths is overridden, as an operator would.
  const std::string pid_path = dir / "latchd.pid";
  LatchdProcess latchd(
      {"--daemonize", "no", "--pidfile", pid_path, "--logfile", "", "--dir", dir.str()}, conf);
  ASSERT_TRUE(latchd.ok()) << latchd.error();
  RawConnection conn(latchd.port());
  EXPECT_EQ(conn.Command("PING"), "+PONG\r\n");
  EXPECT_EQ(conn.Command("CONFIG", "GET", "protected-mode"),
            "*2\r\n$14\r\nprotected-mode\r\n$3\r\nyes\r\n");
  const std::string log = latchd.Log();
  EXPECT_EQ(Count(log, "ignored by latchd"), 1u) << log;
  EXPECT_NE(log.find(" * ignored by latchd (not applicable to a lock server): "), std::string::npos)
      << "at notice level (*): " << log;
  EXPECT_NE(log.find("lazyfree-lazy-eviction"), std::string::npos) << log;
  EXPECT_EQ(ReadAll(pid_path), std::to_string(latchd.pid()) + "\n");
  EXPECT_EQ(latchd.Stop(), 0);
  EXPECT_FALSE(fs::exists(pid_path)) << "the pid file is removed at a clean exit";
}

TEST(ServiceWireTest, StartsFromTheShippedLatchdConf) {
  LatchdProcess latchd({}, std::string(LATCH_SOURCE_DIR) + "/conf/latchd.conf");
  ASSERT_TRUE(latchd.ok()) << latchd.error();
  RawConnection conn(latchd.port());
  EXPECT_EQ(conn.Command("PING"), "+PONG\r\n");
  EXPECT_EQ(Count(latchd.Log(), "ignored by latchd"), 0u) << "latchd.conf holds latchd's own";
}

TEST(ServiceWireTest, ConfigErrorsAreRedisOnes) {
  // Each is fatal for both servers, with the same reason on the last line.
  const char* cases[] = {
      "--rdbcompression maybe",
      "--databases 0",
      "--notify-keyspace-events Q",
      "--supervised x",
      "--tcp-backlog -1",
      "--appendfsync sometimes",
      "--nosuch 1",
      "--daemonize yes yes",
      "--syslog-facility x",
      "--oom-score-adj-values 1 2 5000",
      "--client-output-buffer-limit master 0 0 0",
      "--dir /nonexistent-latch-dir",
  };
  for (const char* args : cases) {
    const auto [redis_out, redis_status] = RunShellCommand("redis-server --port 0 " + std::string(args));
    const auto [latch_out, latch_status] =
        RunShellCommand(std::string(LATCHD_PATH) + " --port 0 " + std::string(args));
    EXPECT_EQ(redis_status, 1) << args << ": " << redis_out;
    EXPECT_EQ(latch_status, 1) << args << ": " << latch_out;
    EXPECT_EQ(LastLine(latch_out), LastLine(redis_out)) << args;
    EXPECT_NE(latch_out.find("*** FATAL CONFIG FILE ERROR"), std::string::npos) << latch_out;
  }
}

TEST(ServiceWireTest, TellsSystemdReadyAndStopping) {
  TempDir dir;
  NotifySocket notify(dir / "notify");
  ASSERT_TRUE(notify.bound());
  // The child inherits the environment at fork: set it only around the start.
  ::setenv("NOTIFY_SOCKET", notify.path().c_str(), 1);
  LatchdProcess latchd({"--supervised", "auto", "--daemonize", "yes"});
  ::unsetenv("NOTIFY_SOCKET");
  ASSERT_TRUE(latchd.ok()) << latchd.error();
  const std::string ready = notify.Receive();
  EXPECT_NE(ready.find("READY=1\n"), std::string::npos) << ready;
  EXPECT_NE(ready.find("STATUS=Ready to accept connections\n"), std::string::npos) << ready;
  // Supervised: daemonize is ignored, the process systemd started is the server.
  RawConnection conn(latchd.port());
  EXPECT_EQ(conn.Command("PING"), "+PONG\r\n");
  EXPECT_EQ(latchd.Stop(), 0);
  EXPECT_NE(notify.Receive().find("STOPPING=1\n"), std::string::npos);
  EXPECT_NE(latchd.Log().find("Supervised by systemd"), std::string::npos) << latchd.Log();
}

TEST(ServiceWireTest, DaemonizeForksAndWritesThePidFile) {
  TempDir dir;
  const int port = FreePort();
  const std::string pid_path = dir / "latchd.pid";
  const auto [out, status] = RunShellCommand(std::string(LATCHD_PATH) + " --port " + std::to_string(port) +
                                      " --bind 127.0.0.1 --daemonize yes --pidfile " + pid_path +
                                      " --logfile " + (dir / "latchd.log"));
  ASSERT_EQ(status, 0) << "the parent exits at once: " << out;
  ASSERT_TRUE(Eventually([&] { return !ReadAll(pid_path).empty(); }, 5s))
      << ReadAll(dir / "latchd.log");
  const pid_t pid = static_cast<pid_t>(std::atol(ReadAll(pid_path).c_str()));
  ASSERT_GT(pid, 1);
  RawConnection conn;
  ASSERT_TRUE(Eventually([&] { return conn.Connect(port); }, 5s));
  EXPECT_EQ(conn.Command("PING"), "+PONG\r\n");
  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  EXPECT_TRUE(Eventually([&] { return ::kill(pid, 0) != 0; }, 5s)) << "the daemon exits on SIGTERM";
  EXPECT_FALSE(fs::exists(pid_path));
  if (::kill(pid, 0) == 0) ::kill(pid, SIGKILL);
}

TEST(ServiceWireTest, LogFileIsReopenedAfterLogrotate) {
  LATCH_SKIP_UNDER_TSAN("reads the log at moments that TSan's slower start-up shifts; Debug and ASan assert it");
  TempDir dir;
  const std::string log = dir / "latchd.log";
  LatchdProcess latchd({"--logfile", log});
  ASSERT_TRUE(latchd.ok()) << latchd.error();
  // logrotate without copytruncate, then its postrotate: kill -HUP.
  fs::rename(log, log + ".1");
  ASSERT_EQ(::kill(latchd.pid(), SIGHUP), 0);
  EXPECT_TRUE(
      Eventually([&] { return ReadAll(log).find("Received SIGHUP") != std::string::npos; }, 5s))
      << ReadAll(log);
  EXPECT_NE(ReadAll(log + ".1").find("Ready to accept connections"), std::string::npos);
  // Moved again, with no signal at all: the next line still goes to a new file.
  fs::rename(log, log + ".2");
  RawConnection conn(latchd.port());
  conn.Send(RawConnection::Encode({"SHUTDOWN", "NOSAVE"}));
  EXPECT_EQ(latchd.WaitExit(), 0);
  EXPECT_NE(ReadAll(log).find("User requested shutdown"), std::string::npos) << ReadAll(log);
  EXPECT_EQ(ReadAll(log + ".2").find("User requested shutdown"), std::string::npos);
}

// An address of this host other than loopback, or "" when it has none.
std::string NonLoopbackIPv4() {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return "";
  std::string found;
  for (ifaddrs* i = list; i != nullptr && found.empty(); i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET) continue;
    const auto* in = reinterpret_cast<const sockaddr_in*>(i->ifa_addr);
    if ((ntohl(in->sin_addr.s_addr) >> 24) == 127) continue;
    char text[INET_ADDRSTRLEN];
    ::inet_ntop(AF_INET, &in->sin_addr, text, sizeof(text));
    found = text;
  }
  ::freeifaddrs(list);
  return found;
}

// Connects to ip:port, sends PING and returns everything read until the server closes (or
// 5 s pass).
std::string PingFrom(const std::string& ip, int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  ::inet_pton(AF_INET, ip.c_str(), &address.sin_addr);
  std::string out;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0) {
    (void)!::write(fd, "PING\r\n", 6);
    char buffer[4096];
    pollfd p{fd, POLLIN, 0};
    while (::poll(&p, 1, 5000) == 1) {
      const ssize_t n = ::read(fd, buffer, sizeof(buffer));
      if (n <= 0) break;
      out.append(buffer, static_cast<std::size_t>(n));
      if (out == "+PONG\r\n" || out.starts_with("-NOAUTH")) break;
    }
  }
  ::close(fd);
  return out;
}

TEST(ServiceWireTest, ProtectedModeRefusesOtherHostsAsRedisDoes) {
  const std::string ip = NonLoopbackIPv4();
  if (ip.empty()) GTEST_SKIP() << "this host has no non-loopback IPv4 address";
  // Bound to both: a client reaching the host's own address is not on the loopback interface.
  RedisServerProcess redis({"--bind", "127.0.0.1", ip, "--protected-mode", "yes"});
  LatchdProcess latchd({"--bind", "127.0.0.1", ip});
  ASSERT_TRUE(redis.ok()) << redis.error();
  ASSERT_TRUE(latchd.ok()) << latchd.error();
  const std::string expected = PingFrom(ip, redis.port());
  ASSERT_TRUE(expected.starts_with("-DENIED Redis is running in protected mode")) << expected;
  EXPECT_EQ(PingFrom(ip, latchd.port()), expected);
  EXPECT_EQ(PingFrom("127.0.0.1", latchd.port()), "+PONG\r\n");
  // A password lifts it (and then AUTH is required).
  LatchdProcess with_password({"--bind", "127.0.0.1", ip, "--requirepass", "pw"});
  ASSERT_TRUE(with_password.ok()) << with_password.error();
  EXPECT_TRUE(PingFrom(ip, with_password.port()).starts_with("-NOAUTH"));
  LatchdProcess off({"--bind", "127.0.0.1", ip, "--protected-mode", "no"});
  ASSERT_TRUE(off.ok()) << off.error();
  EXPECT_EQ(PingFrom(ip, off.port()), "+PONG\r\n");
}

// Runs `fn` with file descriptor 2 pointed at a temporary file; returns what was written.
template <typename Fn>
std::string CaptureStderr(Fn&& fn) {
  TempDir dir;
  const std::string path = dir / "stderr";
  std::fflush(stderr);
  const int saved = ::dup(STDERR_FILENO);
  const int file = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ::dup2(file, STDERR_FILENO);
  ::close(file);
  fn();
  std::fflush(stderr);
  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
  return ReadAll(path);
}

TEST(EmbeddedLoggerTest, ServerNeverWritesThroughOrIntoTheHostsDefaultLogger) {
  std::ostringstream host_lines;
  std::ostringstream server_lines;
  const auto previous = spdlog::default_logger();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>(
      "host", std::make_shared<spdlog::sinks::ostream_sink_mt>(host_lines)));
  spdlog::default_logger()->set_level(spdlog::level::info);
  // The host hands the server a logger of its own by registering it under the server's name.
  auto server_logger = std::make_shared<spdlog::logger>(
      "embedded-test", std::make_shared<spdlog::sinks::ostream_sink_mt>(server_lines));
  spdlog::register_logger(server_logger);
  {
    Options options;
    options.port = 0;
    options.logger_name = "embedded-test";
    Server server(options);
    RawConnection conn(server.start());
    EXPECT_EQ(conn.Command("CONFIG", "SET", "loglevel", "warning"), "+OK\r\n");
    EXPECT_EQ(server_logger->level(), spdlog::level::warn);
    EXPECT_EQ(spdlog::default_logger()->level(), spdlog::level::info) << "host's level changed";
    EXPECT_EQ(conn.Command("SHUTDOWN", "SAVE").substr(0, 4), "-ERR");  // logs a warning
    server.stop();
  }
  spdlog::drop("embedded-test");
  spdlog::set_default_logger(previous);
  EXPECT_EQ(host_lines.str(), "");
  EXPECT_NE(server_lines.str().find("Listening on"), std::string::npos) << server_lines.str();
  EXPECT_NE(server_lines.str().find("SHUTDOWN SAVE refused"), std::string::npos);
}

TEST(EmbeddedLoggerTest, OwnLoggerWritesToStderrAndNothingIsSilent) {
  const auto run = [](const char* loglevel) {
    return CaptureStderr([loglevel] {
      Options options;
      options.port = 0;
      options.loglevel = loglevel;
      Server server(options);
      server.start();
      server.stop();
    });
  };
  EXPECT_NE(run("notice").find(" * Listening on 127.0.0.1:"), std::string::npos);
  EXPECT_EQ(run("nothing"), "");
}

}  // namespace
}  // namespace latch::test
