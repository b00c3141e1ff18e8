#pragma once
// latch::Client: a pipelined, pooled Redis-protocol client for Redis and latchd alike.
//
//   auto options = latch::ClientOptions::FromUrl("redis://127.0.0.1:6380").value();
//   latch::Client client(options);
//   // In an Asio coroutine (any executor):
//   latch::Result<latch::Reply> r = co_await client.command("SET", key, value, "NX", "PX", 3000);
//   // In plain code:
//   auto r2 = client.command_sync("GET", key);
//
// Threading: the client runs its connections on its own I/O thread; every public function is
// safe to call from any thread. Awaitables complete on the awaiting coroutine's executor. The
// blocking *_sync functions must not be called from the client's own I/O thread (they return
// Errc::kInvalidArgument there instead of deadlocking).
//
// Calls: each call goes to the least loaded connection of the pool; calls on one connection
// are pipelined and their replies matched in order. Blocking calls (CallOptions::blocking)
// get an idle connection of their own, opened on demand and kept for reuse. A call that gets no
// reply within its timeout fails with Errc::kTimeout and its connection is closed, failing the
// other calls in flight on it with Errc::kConnectionLost: after a broken connection no reply can
// ever reach the wrong caller. Calls not yet written wait for the next connection, which is opened
// with jittered exponential backoff after a failure. The Client must outlive every call.
//
// Only <boost/asio/awaitable.hpp> is included here; sockets and the io_context stay in the
// implementation.
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "latch/command.h"
#include "latch/endpoint.h"
#include "latch/protocol/reply_reader.h"
#include "latch/result.h"

namespace latch {

using Reply = protocol::Reply;
using ReplyType = protocol::ReplyType;
template <class T>
using Awaitable = boost::asio::awaitable<T>;

// TLS, used when the endpoint is rediss:// (Endpoint::tls).
struct TlsOptions {
  std::string ca_file;  // PEM CA certificate(s) the server's is checked against; empty: the
                        // system's (/etc/ssl/certs)
  // A client certificate and its key (PEM), for servers with tls-auth-clients yes.
  std::string cert_file;
  std::string key_file;
  // Sent as SNI and checked against the server's certificate; empty: the endpoint's host.
  std::string server_name;
  bool verify = true;  // false: any server certificate is accepted (tests only: no protection)
};

struct ClientOptions {
  Endpoint endpoint;
  // Several nodes (redis://h1:p1,h2:p2,h3:p3/db: a latch cluster, or a Redis master and its
  // replicas): every call goes to the one that leads, found with ROLE on each new connection
  // and followed across failovers; a command answered -READONLY or -TRYAGAIN (it did not run)
  // is sent again to the leader within its timeout. Empty or one node: `endpoint` only.
  std::vector<Endpoint> nodes;
  TlsOptions tls;
  std::string client_name;  // CLIENT SETNAME; empty: none
  int protocol = 3;         // 3: HELLO 3 when the server has it, else RESP2; 2: RESP2 only
  std::size_t pool_size = 1;
  // Blocking calls (a LOCK.ACQUIRE that waits on the server) each take a connection of their
  // own; after a burst, idle ones beyond this many are closed.
  std::size_t max_idle_blocking = 2;
  std::chrono::milliseconds connect_timeout{2000};  // TCP connect + handshake
  std::chrono::milliseconds call_timeout{2000};     // default per call
  std::chrono::milliseconds backoff_min{10};        // first reconnect delay after a failure
  std::chrono::milliseconds backoff_max{1000};
  protocol::ReplyReaderLimits reader_limits;

  // redis://[[user]:password@]host[:port][,host[:port]...][/db] (rediss:// for TLS): one
  // node, or several sharing the user, password, database and TLS settings.
  static Result<ClientOptions> FromUrl(std::string_view url);
};

struct CallOptions {
  std::chrono::milliseconds timeout{0};  // 0: ClientOptions::call_timeout
  // The server may hold the reply back (LOCK.ACQUIRE ... WAIT, BLPOP): the call gets a
  // connection of its own, so that calls pipelined behind it are not stuck until it returns.
  bool blocking = false;
};

// What the server offers, probed once per connection during its handshake.
struct Capabilities {
  int protocol = 2;            // RESP version in use
  bool lock_commands = false;  // LOCK.ACQUIRE / LOCK.RELEASE / LOCK.EXTEND (latchd)
  bool scripting = false;      // EVALSHA / SCRIPT LOAD
  bool delex = false;          // DELEX ... IFEQ and SET ... IFEQ (Redis 8.4+)
};

class ClientImpl;

class Client {
 public:
  using Callback = std::function<void(Result<Reply>)>;
  using PipelineCallback = std::function<void(Result<std::vector<Reply>>)>;

  explicit Client(ClientOptions options);
  ~Client();  // fails calls still pending with Errc::kClientClosed and joins the I/O thread
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  template <class... Args>
  Awaitable<Result<Reply>> command(const Args&... args) {
    return execute(Command(args...));
  }
  // (No default arguments on coroutines: GCC 12 miscompiles them, hence the overloads.)
  Awaitable<Result<Reply>> execute(Command cmd, CallOptions options);
  Awaitable<Result<Reply>> execute(Command cmd) { return execute(std::move(cmd), CallOptions{}); }
  // Sends the commands back to back on one connection; all replies, in order, or an error.
  Awaitable<Result<std::vector<Reply>>> pipeline(std::vector<Command> cmds, CallOptions options);
  Awaitable<Result<std::vector<Reply>>> pipeline(std::vector<Command> cmds) {
    return pipeline(std::move(cmds), CallOptions{});
  }

  template <class... Args>
  Result<Reply> command_sync(const Args&... args) {
    return execute_sync(Command(args...));
  }
  Result<Reply> execute_sync(Command cmd, CallOptions options = {});
  Result<std::vector<Reply>> pipeline_sync(std::vector<Command> cmds, CallOptions options = {});

  // Callback forms: the callback runs on the client's I/O thread and must not block.
  void async_execute(Command cmd, CallOptions options, Callback done);
  void async_pipeline(std::vector<Command> cmds, CallOptions options, PipelineCallback done);

  // The server's capabilities, connecting first if no connection has been made yet.
  Awaitable<Result<Capabilities>> capabilities();

  const ClientOptions& options() const;
  ClientImpl& impl() { return *impl_; }  // for the lock layer (client/src only)

 private:
  std::unique_ptr<ClientImpl> impl_;
};

}  // namespace latch
