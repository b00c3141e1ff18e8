#pragma once
// One pooled connection of a Client. Lives on the client's I/O thread: every member function
// must be called there.
//
// Life cycle: idle -> connecting (TCP connect, HELLO/AUTH/SETNAME/SELECT, capability probe)
// -> ready -> (broken) -> idle again. A connection is opened on demand when a call arrives;
// after a failed attempt the next one waits a jittered, exponentially growing delay. Calls
// queued while connecting or backing off are written once the connection is ready, or fail
// when the attempt fails (each call sees at most one failed attempt) or their timeout fires.
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "client_socket.h"
#include "latch/client.h"
#include "leader_view.h"

namespace latch::client_internal {

// A call of one or more commands written back to back; completes once, with all its replies
// or with an error.
struct PendingCall {
  std::string bytes;
  std::size_t expected = 1;
  int redirects = 0;  // times sent again after -READONLY/-TRYAGAIN
  std::vector<Reply> replies;
  Client::PipelineCallback done;
  std::chrono::milliseconds timeout{0};
  std::unique_ptr<boost::asio::steady_timer> timer;
  bool finished = false;

  void Finish(Result<std::vector<Reply>> result);
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  using CapabilitySink = std::function<void(const Capabilities&)>;

  // `leaders`: the Client's view of several nodes (null for one): the connection goes to the
  // leader and follows it (leader_view.h).
  Connection(boost::asio::io_context& ctx, const ClientOptions& options, LeaderView* leaders,
             std::uint64_t seed, CapabilitySink on_capabilities);

  void Submit(std::shared_ptr<PendingCall> call);
  // Fails every call with `why` and stops for good.
  void Shutdown(const Error& why);
  std::size_t load() const { return outbox_.size() + inflight_.size(); }

 private:
  enum class State { kIdle, kConnecting, kReady, kBackoff, kClosed };
  using Socket = ClientSocket;

  boost::asio::awaitable<void> Run();
  // The backoff wait before the next attempt.
  boost::asio::awaitable<void> Pause();
  // One attempt: a connected, handshaken socket_ to the endpoint (to the leader when there are
  // several nodes: each is tried, following ROLE), or the error. *electing: a node answered
  // but none leads (yet): the calls wait for a leader, up to their timeouts, rather than fail.
  boost::asio::awaitable<Result<Capabilities>> Open(bool* electing);
  boost::asio::awaitable<Result<Capabilities>> OpenTo(const Endpoint& endpoint);
  boost::asio::awaitable<Result<Capabilities>> Connect(std::shared_ptr<Socket> socket);
  // After a -READONLY/-TRYAGAIN reply: a single command is queued again (it did not run), and
  // the connection closes once no reply is awaited, to find the leader again.
  bool Redirect(const std::shared_ptr<PendingCall>& call);
  // rediss://: the client side of the TLS handshake on a connected socket; an error text.
  boost::asio::awaitable<std::optional<std::string>> Handshake(Socket& socket);
  // The TLS context of this connection's endpoint, made on first use; null with *error set
  // when the CA or client certificate files do not load.
  boost::asio::ssl::context* TlsContext(std::string* error);
  boost::asio::awaitable<void> ReadLoop(std::shared_ptr<Socket> socket);
  void StartWrite();
  void OnTimeout(const std::shared_ptr<PendingCall>& call);
  // Closes the current socket and fails the calls in flight on it.
  void Break(const Error& why);
  void FailOutbox(const Error& why);
  std::chrono::milliseconds NextBackoff();

  boost::asio::io_context& ctx_;
  const ClientOptions& options_;
  LeaderView* leaders_;
  Endpoint endpoint_;         // where the current socket goes
  NodeRole role_;             // what that node said it is (several nodes only)
  bool redirect_ = false;     // closing to find the leader: write nothing more here
  std::size_t requeued_ = 0;  // calls put back at the front of the outbox since then
  CapabilitySink on_capabilities_;
  std::mt19937_64 rng_;
  State state_ = State::kIdle;
  int failures_ = 0;  // consecutive failed attempts, for the backoff
  std::shared_ptr<Socket> socket_;
  protocol::ReplyReader reader_;
  std::deque<std::shared_ptr<PendingCall>> outbox_;    // not yet written
  std::deque<std::shared_ptr<PendingCall>> inflight_;  // written, replies awaited in order
  std::string write_buf_;
  bool writing_ = false;
  boost::asio::steady_timer backoff_timer_;
  std::unique_ptr<boost::asio::ssl::context> tls_context_;
};

}  // namespace latch::client_internal
