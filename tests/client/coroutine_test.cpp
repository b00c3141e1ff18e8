// The coroutine API from a caller's own io_context, and a server that speaks garbage.
// (The one test file that includes Asio beyond awaitable.hpp.)
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <thread>

#include "backends.h"
#include "latch/lock.h"
#include "latch/redlock.h"

namespace latch::test {
namespace {

using namespace std::chrono_literals;
namespace asio = boost::asio;

// What the coroutine saw; checked after it ran (GoogleTest's macros inside a coroutine body
// trip GCC 12).
struct Seen {
  bool set_ok = false, get_ok = false, pipelined_ok = false, on_caller_thread = true;
  bool acquired = false, refused = false, extended = false, released = false;
  bool red_acquired = false;
  int red_released = 0;
  bool done = false;
};

asio::awaitable<void> UseEverything(Client& client, Lock& lock, Redlock& redlock, Seen& seen) {
  const auto me = std::this_thread::get_id();
  auto set = co_await client.command("SET", "k", "v", "NX", "PX", 3000ms);
  seen.set_ok = set.ok() && set->str == "OK";
  seen.on_caller_thread = seen.on_caller_thread && std::this_thread::get_id() == me;
  auto get = co_await client.command("GET", "k");
  seen.get_ok = get.ok() && get->str == "v";
  // Braced lists inside co_await expressions also trip GCC 12: build them first.
  std::vector<Command> cmds;
  cmds.emplace_back("INCR", "n");
  cmds.emplace_back("INCR", "n");
  auto replies = co_await client.pipeline(std::move(cmds));
  seen.pipelined_ok = replies.ok() && (*replies)[1].integer == 2;

  auto lease = co_await lock.acquire("res", 5s);
  seen.acquired = lease.ok();
  auto second = co_await lock.acquire("res", 5s);
  seen.refused = !second.ok() && second.error().is(Errc::kNotAcquired);
  if (lease.ok()) {
    auto ext = co_await lock.extend(*lease, 5s);
    seen.extended = ext.ok() && *ext == LeaseStatus::kOk;
    auto rel = co_await lock.release(*lease);
    seen.released = rel.ok() && *rel == LeaseStatus::kOk;
  }
  std::vector<std::string> keys(1, "r");
  auto red = co_await redlock.acquire(std::move(keys), 5s);
  seen.red_acquired = red.ok();
  if (red.ok()) {
    auto n = co_await redlock.release(*red);
    seen.red_released = n.ok() ? *n : -1;
  }
  seen.on_caller_thread = seen.on_caller_thread && std::this_thread::get_id() == me;
  seen.done = true;
}

TEST(CoroutineTest, CommandsAndLocksAwaitedFromTheCallersExecutor) {
  auto redis = Backend::Start(BackendKind::kRedis);
  ASSERT_TRUE(redis->ok()) << redis->error();
  Client client(redis->Options());
  Lock lock(client);
  Redlock redlock({&client});
  asio::io_context ctx;
  Seen seen;
  asio::co_spawn(ctx, UseEverything(client, lock, redlock, seen), asio::detached);
  ctx.run_for(10s);
  ASSERT_TRUE(seen.done);
  EXPECT_TRUE(seen.set_ok);
  EXPECT_TRUE(seen.get_ok);
  EXPECT_TRUE(seen.pipelined_ok);
  EXPECT_TRUE(seen.on_caller_thread);
  EXPECT_TRUE(seen.acquired);
  EXPECT_TRUE(seen.refused);
  EXPECT_TRUE(seen.extended);
  EXPECT_TRUE(seen.released);
  EXPECT_TRUE(seen.red_acquired);
  EXPECT_EQ(seen.red_released, 1);
}

// A listener that answers anything with bytes that are not RESP.
class GarbageServer {
 public:
  GarbageServer() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    ::listen(fd_, 4);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] {
      // Serves at most 4 connections, then the listener is shut down by the destructor.
      for (int i = 0; i < 4; ++i) {
        int c = ::accept(fd_, nullptr, nullptr);
        if (c < 0) return;
        char buf[256];
        if (::recv(c, buf, sizeof(buf), 0) > 0) ::send(c, "?garbage\r\n", 10, MSG_NOSIGNAL);
        ::close(c);
      }
    });
  }
  ~GarbageServer() {
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
  }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
};

TEST(CoroutineTest, MalformedRepliesAreAnErrorNotACrash) {
  GarbageServer server;
  auto options = ClientOptions::FromUrl("redis://127.0.0.1:" + std::to_string(server.port()));
  ASSERT_TRUE(options.ok());
  Client client(*options);
  auto r = client.command_sync("PING");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.error().is(Errc::kProtocolError)) << r.error().ToString();
  EXPECT_NE(r.error().message.find("invalid reply type byte '?'"), std::string::npos);
}

}  // namespace
}  // namespace latch::test
