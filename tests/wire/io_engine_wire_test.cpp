// io-engine (docs/design/io_engine.md): the directive (CONFIG GET shows it, CONFIG SET refuses
// it as immutable, a bad value is the parser's error block), a kernel that refuses io_uring
// stopping latchd's start with the reason, and the uring engine's own edges: a pipeline in one
// read, a reply much larger than the socket buffer (short sends), clients that go away in the
// middle of a reply, CLIENT KILL of a client whose receive is in flight. The other wire
// suites run on uring too (label uring, tests/CMakeLists.txt).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <iterator>
#include <string>
#include <vector>

#include "support/embedded_server.h"
#include "support/eventually.h"
#include "support/raw_connection.h"
#include "support/server_process.h"
#include "support/tcp_socket.h"

namespace latch::test {
namespace {

using namespace std::chrono_literals;

Options IoEngineUringOptions() {
  Options o = EmbeddedServer::DefaultOptions();
  o.io_engine = "uring";
  return o;
}

int IoEngineConnectedClients(RawConnection& c) {
  const std::string info = c.Command("INFO", "clients");
  const auto pos = info.find("connected_clients:");
  return pos == std::string::npos ? -1 : std::stoi(info.substr(pos + 18));
}

TEST(IoEngineWire, UringShowsItsEngineAndRefusesConfigSet) {
  EXPECT_EQ(Options().io_engine, "epoll");
  EmbeddedServer server(IoEngineUringOptions());
  RawConnection c(server.port());
  EXPECT_EQ(c.Command("PING"), "+PONG\r\n");
  EXPECT_EQ(c.Command("CONFIG", "GET", "io-engine"), "*2\r\n$9\r\nio-engine\r\n$5\r\nuring\r\n");
  EXPECT_EQ(c.Command("CONFIG", "SET", "io-engine", "epoll"),
            "-ERR CONFIG SET failed (possibly related to argument 'io-engine') - can't set "
            "immutable config\r\n");
}

TEST(IoEngineWire, LatchdTakesEitherEngineAndRefusesAnother) {
  LatchdProcess epoll({"--io-engine", "epoll"});
  ASSERT_TRUE(epoll.ok()) << epoll.error();
  RawConnection e(epoll.port());
  EXPECT_EQ(e.Command("CONFIG", "GET", "io-engine"), "*2\r\n$9\r\nio-engine\r\n$5\r\nepoll\r\n");
  LatchdProcess uring({"--io-engine", "uring"});
  ASSERT_TRUE(uring.ok()) << uring.error();
  RawConnection u(uring.port());
  EXPECT_EQ(u.Command("CONFIG", "GET", "io-engine"), "*2\r\n$9\r\nio-engine\r\n$5\r\nuring\r\n");
  LatchdProcess bad({"--io-engine", "poll"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().find(">>> 'io-engine "), std::string::npos) << bad.error();
  EXPECT_NE(bad.error().find("argument(s) must be one of the following: epoll, uring"),
            std::string::npos)
      << bad.error();
}

// latchd --io-engine uring under a seccomp filter that makes io_uring_setup fail with EPERM
// (what a container runtime's default profile or io_uring_disabled=2 does): it must exit
// before listening, saying why. Returns its exit status and output.
int RunLatchdWithoutIoUring(std::string* output) {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return -1;
  std::vector<std::string> args = {LATCHD_PATH, "--port",      "0",    "--bind",
                                   "127.0.0.1", "--io-engine", "uring"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog program{static_cast<unsigned short>(std::size(filter)), filter};
  const pid_t pid = ::fork();
  if (pid < 0) return -1;
  if (pid == 0) {  // async-signal-safe calls only
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    ::dup2(pipe_fds[1], STDOUT_FILENO);
    ::dup2(pipe_fds[1], STDERR_FILENO);
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0) {
      ::_exit(120);
    }
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(pipe_fds[1]);
  const auto deadline = std::chrono::steady_clock::now() + 15s;
  char buf[4096];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd p{pipe_fds[0], POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
    const ssize_t n = ::read(pipe_fds[0], buf, sizeof(buf));
    if (n <= 0) break;  // EOF: latchd exited
    output->append(buf, static_cast<std::size_t>(n));
  }
  ::close(pipe_fds[0]);
  // The output's end comes a moment before the exit can be reaped.
  int status = 0;
  const bool exited = Eventually([&] { return ::waitpid(pid, &status, WNOHANG) == pid; }, 10s);
  if (!exited) {
    ::kill(pid, SIGKILL);  // still running: it served without io_uring, which is the failure
    ::waitpid(pid, &status, 0);
    return -2;
  }
  return status;
}

TEST(IoEngineWire, KernelThatRefusesIoUringStopsTheStartWithTheReason) {
  std::string output;
  const int status = RunLatchdWithoutIoUring(&output);
  ASSERT_TRUE(WIFEXITED(status)) << status << "\n" << output;
  ASSERT_NE(WEXITSTATUS(status), 120) << "seccomp is not available here";
  EXPECT_EQ(WEXITSTATUS(status), 1) << output;
  EXPECT_NE(output.find("io-engine uring is not available: "), std::string::npos) << output;
  EXPECT_EQ(output.find("Ready to accept connections"), std::string::npos) << output;
}

// A pipeline arrives in one read and leaves in one send; a 4 MB reply takes many sends (the
// socket's buffer is far smaller), each a short write that the connection continues.
TEST(IoEngineWire, UringPipelinesAndBigRepliesArriveWhole) {
  EmbeddedServer server(IoEngineUringOptions());
  RawConnection c(server.port());
  std::string pipeline;
  constexpr int kCommands = 2000;
  for (int i = 0; i < kCommands; ++i) pipeline += RawConnection::Encode({"INCR", "n"});
  ASSERT_TRUE(c.Send(pipeline));
  for (int i = 1; i <= kCommands; ++i) {
    ASSERT_EQ(c.ReadReply(), ":" + std::to_string(i) + "\r\n") << i;
  }
  const std::string big(4 * 1024 * 1024, 'x');
  ASSERT_EQ(c.Command("SET", "big", big), "+OK\r\n");
  TcpSocket slow(server.port(), /*rcvbuf=*/4096);
  ASSERT_TRUE(slow.ok());
  ASSERT_TRUE(slow.SendAll(RawConnection::Encode({"GET", "big"})));
  std::string reply;
  const std::string expected = "$" + std::to_string(big.size()) + "\r\n" + big + "\r\n";
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (reply.size() < expected.size() && std::chrono::steady_clock::now() < deadline) {
    if (slow.ReadSome(&reply, 64 * 1024, 1000ms) < 0) break;
  }
  EXPECT_TRUE(reply == expected) << reply.size() << " of " << expected.size() << " bytes";
  EXPECT_EQ(c.Command("GET", "n"), "$4\r\n2000\r\n");
}

// Clients that leave with a reply half sent (their sends in flight) and a client killed
// while its receive is in flight: each is gone from the server, which serves on.
TEST(IoEngineWire, UringClientsThatGoAwayAreFreed) {
  EmbeddedServer server(IoEngineUringOptions());
  RawConnection c(server.port());
  ASSERT_EQ(c.Command("SET", "big", std::string(2 * 1024 * 1024, 'y')), "+OK\r\n");
  for (int round = 0; round < 3; ++round) {
    std::vector<TcpSocket> leavers;
    for (int i = 0; i < 8; ++i) {
      leavers.emplace_back(server.port(), /*rcvbuf=*/4096);
      ASSERT_TRUE(leavers.back().ok());
      ASSERT_TRUE(leavers.back().SendAll(RawConnection::Encode({"GET", "big"})));
    }
    ASSERT_TRUE(Eventually([&] { return IoEngineConnectedClients(c) == 9; }, 5000ms))
        << IoEngineConnectedClients(c);
    leavers.clear();  // closed unread: the server's sends fail
    EXPECT_TRUE(Eventually([&] { return IoEngineConnectedClients(c) == 1; }, 5000ms))
        << IoEngineConnectedClients(c);
  }
  RawConnection idle(server.port());
  ASSERT_EQ(idle.Command("CLIENT", "SETNAME", "idle"), "+OK\r\n");
  ASSERT_EQ(c.Command("CLIENT", "KILL", "SKIPME", "yes", "TYPE", "normal"), ":1\r\n");
  EXPECT_TRUE(idle.WaitClosed());
  EXPECT_TRUE(Eventually([&] { return IoEngineConnectedClients(c) == 1; }, 5000ms));
  EXPECT_EQ(c.Command("PING"), "+PONG\r\n");
}

}  // namespace
}  // namespace latch::test
