// What one client can make a latchd process spend, measured on the process itself (issue
// 16, items 3, 4 and 6; issue 9, item 4): declared-but-unsent bulks, descriptors under a
// small `ulimit -n`, RSS after a connection storm, and an allocation failure in a command.
// LATCHD_UNDER_TEST=<older latchd> runs them against another build.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "support/process_stats.h"
#include "support/raw_connection.h"
#include "support/sanitizer.h"
#include "support/server_process.h"
#include "support/tcp_socket.h"
#include "support/wire_expect.h"

namespace latch::test {
namespace {

using namespace std::chrono_literals;

ServerProcess StartLatchd(const std::string& shell_prefix, std::vector<std::string> extra = {}) {
  return ServerProcess("latchd", [=](int port) {
    std::string cmd = shell_prefix + " exec '" + LatchdUnderTest() + "' --port " +
                      std::to_string(port) + " --bind 127.0.0.1 --io-threads 2";
    for (const std::string& a : extra) cmd += " '" + a + "'";
    return std::vector<std::string>{"/bin/bash", "-c", cmd};
  });
}

// The clients other than `admin` whose query buffer holds bytes (CLIENT LIST's qbuf).
int OthersWithQueryBuffer(RawConnection& admin) {
  const std::string list = admin.Command("CLIENT", "LIST");
  const std::string self = admin.Command("CLIENT", "ID");  // ":<id>\r\n"
  const std::string self_field = "id=" + self.substr(1, self.size() - 3) + " ";
  int n = 0;
  std::size_t start = 0;
  for (std::size_t end = list.find('\n'); end != std::string::npos;
       start = end + 1, end = list.find('\n', start)) {
    const std::string line = list.substr(start, end - start);
    const auto qbuf = line.find(" qbuf=");
    const bool is_self = line.rfind(self_field, 0) == 0;  // id= comes first
    if (!is_self && qbuf != std::string::npos && line.compare(qbuf + 6, 2, "0 ") != 0) ++n;
  }
  return n;
}

// CLIENT INFO's rbs (read buffer size) of `c` itself; -1 when missing.
long long ReadBufferSize(RawConnection& c) {
  const std::string info = c.Command("CLIENT", "INFO");
  const auto at = info.find(" rbs=");
  return at == std::string::npos ? -1 : std::stoll(info.substr(at + 5));
}

// Redis allocates a bulk's buffer only as its bytes arrive; eight clients declaring 512 MB
// and sending two bytes used to cost 4.2 GB of RSS.
TEST(ResourceLimits, DeclaredHugeBulksCostLittle) {
  ServerProcess latchd = StartLatchd("");
  ASSERT_TRUE(latchd.ok()) << latchd.error();
  RawConnection admin(latchd.port());
  ASSERT_EQ(admin.Command("PING"), "+PONG\r\n");
  const std::int64_t before = RssBytes(latchd.pid());
  std::vector<TcpSocket> clients;
  for (int i = 0; i < 8; ++i) {
    clients.emplace_back(latchd.port());
    ASSERT_TRUE(clients.back().SendAll("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$536870912\r\nab"));
  }
  // Measured once the server has read every declaration (each client's query buffer holds
  // its unfinished request).
  ASSERT_TRUE(Eventually([&] { return OthersWithQueryBuffer(admin) == 8; }, 10s))
      << admin.Command("CLIENT", "LIST");
  EXPECT_EQ(admin.Command("PING"), "+PONG\r\n");
  const std::int64_t grown = RssBytes(latchd.pid()) - before;
  EXPECT_LT(grown, 8 << 20) << "RSS grew by " << grown << " bytes for 16 bytes of payload";
}

// Under `ulimit -n 64` latchd cannot have 10032 descriptors: maxclients drops to 32 with
// Redis's log lines, extra clients are told so, and the process is idle afterwards.
TEST(ResourceLimits, SmallUlimitLowersMaxclientsAndRefusesExtras) {
  ServerProcess latchd = StartLatchd("ulimit -n 64 &&");
  ASSERT_TRUE(latchd.ok()) << latchd.error();
  EXPECT_NE(latchd.Log().find("maxclients has been reduced to 32 to compensate for low ulimit"),
            std::string::npos)
      << latchd.Log();
  RawConnection admin(latchd.port());
  EXPECT_EQ(admin.Command("CONFIG", "GET", "maxclients"),
            "*2\r\n$10\r\nmaxclients\r\n$2\r\n32\r\n");
  std::vector<RawConnection> clients;
  int pongs = 0, refused = 0;
  for (int i = 0; i < 60; ++i) {
    clients.emplace_back(latchd.port(), 3000ms);
    const std::string reply = clients.back().Command("PING");
    if (reply == "+PONG\r\n") ++pongs;
    if (reply == "-ERR max number of clients reached\r\n") ++refused;
  }
  EXPECT_EQ(pongs, 31);  // 32 with the admin connection
  EXPECT_EQ(refused, 29);
  EXPECT_LE(CpuMsPerSecondOver(latchd.pid(), 1000ms), 100) << "busy while nothing happens";
  EXPECT_EQ(admin.Command("PING"), "+PONG\r\n");
}

// Out of descriptors all the same (maxclients raised past the limit at run time): the
// acceptor backs off instead of spinning, and serves the waiting client once one leaves.
TEST(ResourceLimits, AcceptorBacksOffWhenOutOfDescriptors) {
  ServerProcess latchd = StartLatchd("ulimit -n 64 &&");
  ASSERT_TRUE(latchd.ok()) << latchd.error();
  RawConnection admin(latchd.port());
  ASSERT_EQ(admin.Command("CONFIG", "SET", "maxclients", "1000"), "+OK\r\n");
  std::vector<RawConnection> clients;
  for (int i = 0; i < 70; ++i) clients.emplace_back(latchd.port(), 150ms);
  int answered = 0;
  for (RawConnection& c : clients) answered += c.Command("PING") == "+PONG\r\n" ? 1 : 0;
  EXPECT_LT(answered, 70);
  EXPECT_LE(CpuMsPerSecondOver(latchd.pid(), 1000ms), 200) << "the acceptor spins on EMFILE";
  // Enough leave for every connection queued in the backlog, and the late one, to fit.
  for (int i = 0; i < 35; ++i) clients[static_cast<std::size_t>(i)].Close();
  RawConnection late(latchd.port(), 3000ms);
  EXPECT_EQ(late.Command("PING"), "+PONG\r\n");
}

// A storm of connections leaves no RSS behind once they are gone (idle buffers are not
// zero-filled, and freed memory goes back to the system).
TEST(ResourceLimits, RssComesBackAfterConnectionStorm) {
  LATCH_SKIP_UNDER_SANITIZER("RSS and address-space limits mean nothing under a sanitizer's allocator");
  ServerProcess latchd = StartLatchd("");
  ASSERT_TRUE(latchd.ok()) << latchd.error();
  RawConnection admin(latchd.port());
  ASSERT_EQ(admin.Command("PING"), "+PONG\r\n");
  const std::int64_t before = RssBytes(latchd.pid());
  constexpr int kStorm = 4000;
  {
    std::vector<TcpSocket> storm;
    storm.reserve(kStorm);
    const std::string ping = RawConnection::Encode({"PING"});
    for (int i = 0; i < kStorm; ++i) {
      storm.emplace_back(latchd.port());
      ASSERT_TRUE(storm.back().ok()) << i;
      ASSERT_TRUE(storm.back().SendAll(ping));
    }
    for (TcpSocket& s : storm) {
      std::string reply;
      ASSERT_GT(s.ReadSome(&reply, 64, 5000ms), 0);
    }
  }
  // 16 MB of slack: the merged server (journal, REST sessions, stats) settles 8-9 MB above
  // its idle RSS after the storm; the code before this fix kept 41 MB (6.3 -> 47.6 MB).
  constexpr std::int64_t kSlack = 16 << 20;
  std::int64_t after = 0;
  Eventually([&] { return (after = RssBytes(latchd.pid())) < before + kSlack; }, 5000ms);
  EXPECT_LT(after, before + kSlack) << "RSS " << before << " -> " << after;
  EXPECT_EQ(admin.Command("PING"), "+PONG\r\n");
}

// Issue 9: a std::bad_alloc in a command (here: no address space left for a reply) used to
// end the process; now that client gets -OOM and is closed, and the others are served.
TEST(ResourceLimits, AllocationFailureClosesOnlyThatClient) {
  LATCH_SKIP_UNDER_SANITIZER("RSS and address-space limits mean nothing under a sanitizer's allocator");
  ServerProcess latchd = StartLatchd("");
  ASSERT_TRUE(latchd.ok()) << latchd.error();
  RawConnection admin(latchd.port(), 10s);
  const std::string value(40 << 20, 'v');
  ASSERT_EQ(admin.Command("SET", "k", value), "+OK\r\n");
  // The read buffer that held the SET is given back (CLIENT INFO shows the last published
  // size: the one before the command that asks).
  ASSERT_TRUE(Eventually([&] { return ReadBufferSize(admin) < (1 << 20); }))
      << admin.Command("CLIENT", "INFO");
  const std::int64_t room = VmSizeBytes(latchd.pid()) + (100 << 20);
  const rlimit as{static_cast<rlim_t>(room), static_cast<rlim_t>(room)};
  ASSERT_EQ(::prlimit(latchd.pid(), RLIMIT_AS, &as, nullptr), 0);

  TcpSocket greedy(latchd.port());
  ASSERT_TRUE(greedy.SendAll(RawConnection::Encode({"GET", "k"}) +
                             RawConnection::Encode({"GET", "k"}) +
                             RawConnection::Encode({"GET", "k"})));
  std::string got;
  while (greedy.ReadSome(&got, 1 << 20, 5000ms) > 0) {
  }
  EXPECT_TRUE(ProcessAlive(latchd.pid())) << latchd.Log();
  EXPECT_NE(got.find("-OOM "), std::string::npos) << got.size() << " bytes, no -OOM";
  EXPECT_EQ(admin.Command("PING"), "+PONG\r\n");
  EXPECT_EQ(admin.Command("EXISTS", "k"), ":1\r\n");
}

}  // namespace
}  // namespace latch::test
