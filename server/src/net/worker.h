#pragma once
// A worker thread: its own io_context, the connections pinned to it, and the active-expiry
// and idle-timeout pass over the shards it owns (shard i belongs to worker i % workers).
// Included only by the net/ sources (it pulls in Asio).
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_set>
#include <vector>

#include "server_state.h"

namespace latch {

class Connection;
class TlsContext;
class UringRing;

class Worker {
 public:
  // `uring`: the worker's plain client connections run on an io_uring of their own
  // (io-engine uring, net/uring_ring.h); throws std::runtime_error when the kernel refuses it.
  Worker(int index, ServerState& state, bool uring = false);
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  boost::asio::io_context& context() { return ctx_; }
  // The worker's ring under io-engine uring, else null.
  UringRing* ring() { return ring_.get(); }
  void Start(std::vector<int> shards);
  // Closes every connection and lets the thread finish. Call from any thread; then Join().
  void Shutdown();
  void Join();

  // Any thread (the acceptor): a new client for this worker. Sockets are started in batches
  // of kAdoptBatch, each batch one turn of the event loop, so that a connection storm
  // queues ahead of the clients already served by at most one batch.
  // `tls`: a client of the TLS port, to be served over that context; null for plain TCP.
  void Adopt(boost::asio::ip::tcp::socket socket, std::shared_ptr<ClientInfo> info,
             std::shared_ptr<TlsContext> tls = nullptr);

  // Worker-thread only.
  void Register(Connection* c) { connections_.insert(c); }
  void Unregister(Connection* c) {
    connections_.erase(c);
    ++closed_since_trim_;
  }
  // A connection gave back a big buffer (a large reply or request): see TrimHeap().
  void NoteBigFree(std::size_t bytes) { freed_since_trim_ += bytes; }

 private:
  void ScheduleTick(std::chrono::milliseconds delay);
  void Tick();
  void TrimHeap();
  void StartAdopted();
  static constexpr std::size_t kAdoptBatch = 32;
  static constexpr std::size_t kClosesBeforeTrim = 64;
  // One big reply's worth: with 32 MiB, the last clients closed after a trim (less than
  // 32 MiB of buffers between them) kept their pages for good; Robust.NonReadingClients-
  // WithBigReplies then saw the RSS 16.2 MB above its start, 1 run in 6. Still at most one
  // trim a second.
  static constexpr std::size_t kFreedBeforeTrim = 4 * 1024 * 1024;

  int index_;
  ServerState& state_;
  boost::asio::io_context ctx_;
  // Destroyed before ctx_ (it waits on ctx_) and after the connections' last posts ran.
  std::unique_ptr<UringRing> ring_;
  boost::asio::steady_timer timer_;
  std::thread thread_;
  std::vector<int> shards_;
  std::unordered_set<Connection*> connections_;
  bool stopping_ = false;
  struct Adopted {
    boost::asio::ip::tcp::socket socket;
    std::shared_ptr<ClientInfo> info;
    std::shared_ptr<TlsContext> tls;
  };
  std::mutex adopt_mu_;  // guards adopted_
  std::vector<Adopted> adopted_;
  std::int64_t last_connection_pass_ms_ = INT64_MIN / 2;  // injected clock
  std::size_t closed_since_trim_ = 0;
  std::size_t freed_since_trim_ = 0;
  std::int64_t last_trim_ms_ = -1000;
};

}  // namespace latch
