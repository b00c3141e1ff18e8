#pragma once
// latch::Server's implementation: the listeners, the workers and the order of start and stop.
// server.cpp: the life cycle (start, stop, SHUTDOWN, wait); server_accept.cpp: opening the
// listeners and handing each accepted socket to a worker round-robin. Included by those two
// files only (it brings Asio).
#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "commands/command_table.h"
#include "latch/clock.h"
#include "latch/options.h"
#include "net/metrics_http.h"
#include "server_state.h"

namespace latch {

class TlsContextSlot;
class UnixListener;
class Worker;
namespace rest {
class SessionSet;
}  // namespace rest

class ServerImpl {
 public:
  explicit ServerImpl(Options o);
  ~ServerImpl();

  // Serves, then loads the journal while clients get -LOADING (as Redis does); a journal that
  // cannot be loaded stops everything again and throws.
  int Start();
  void Stop();
  // SHUTDOWN, from a worker thread in the middle of a command (server.cpp says what it may
  // and may not do).
  void RequestShutdown();
  void Wait();

  int port() const { return state_.tcp_port; }
  int metrics_port() const { return state_.metrics_port; }
  int rest_port() const { return rest_port_; }
  int tls_port() const { return tls_port_; }
  int io_threads() const { return threads_; }
  int shards() const { return shards_; }
  const Clock& clock() const { return *clock_; }
  ServerState& state() { return state_; }

 private:
  using tcp = boost::asio::ip::tcp;
  // What a start reads from the options, under their lock.
  struct ListenConfig {
    std::string bind, rest_bind, unixsocket;
    int port = 0, metrics_port = 0, rest_port = 0, tls_port = 0, unixsocketperm = 0;
    bool journal_to_load = false;
    bool uring = false;  // io-engine uring
    std::int64_t restart_delay = 0;
  };
  // kRest: an HTTP connection of the REST endpoint, served on the worker like a RESP one.
  enum class Endpoint { kResp, kRest, kTls };

  // Life cycle (server.cpp).
  int StartServing(bool* started);
  ListenConfig ReadListenConfig();
  void StartWorkers(bool uring);
  void LogListening(const std::string& first, const std::string& rest_first,
                    const std::string& unixsocket);
  std::shared_ptr<TlsContextSlot> MakeTlsSlot(const Options& o);
  void CloseRestSessions();
  void SetStopped(bool stopped);

  // Listeners and accepts (server_accept.cpp).
  // Opens every listener the configuration asks for; returns the first RESP address (and
  // the REST one in `rest_first`). Throws, with nothing left open, when one cannot open.
  std::string OpenAllListeners(ListenConfig& c, std::string* rest_first);
  std::string OpenListeners(const std::string& bind, int& port, const std::string& what,
                            std::vector<std::unique_ptr<tcp::acceptor>>& out);
  void CloseAcceptor();
  void CloseAcceptorsNow();
  void StartAccepting();
  void Accept(tcp::acceptor& acceptor, Endpoint kind);
  void BackOffAccept(tcp::acceptor& acceptor, const boost::system::error_code& ec, Endpoint kind);
  bool ApplyListenOptions(tcp::socket& socket);
  void OnAccept(std::size_t i, tcp::socket socket, Endpoint kind);
  void AcceptUnix();
  void OnUnixAccept(std::size_t i, boost::asio::local::stream_protocol::socket socket);

  std::shared_ptr<Clock> clock_;
  int threads_;
  int shards_;
  CommandTable table_;
  ServerState state_;
  MetricsHttp metrics_{state_};
  boost::asio::io_context accept_ctx_;
  std::vector<std::unique_ptr<tcp::acceptor>> acceptors_;       // one per bind address
  std::vector<std::unique_ptr<tcp::acceptor>> rest_acceptors_;  // one per rest-bind address
  std::vector<std::unique_ptr<tcp::acceptor>> tls_acceptors_;   // one per bind address
  int tls_port_ = 0;
  std::vector<std::unique_ptr<rest::SessionSet>> rest_sessions_;  // one per worker
  std::unique_ptr<UnixListener> unix_;  // unixsocket; null when not configured
  int rest_port_ = 0;
  std::thread accept_thread_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::size_t next_worker_ = 0;
  int backlog_ = 511;
  std::mutex mu_;  // Start/Stop
  bool running_ = false;
  std::atomic<bool> shutdown_requested_{false};
  std::mutex wait_mu_;  // Wait(): never held while joining a thread
  std::condition_variable wait_cv_;
  bool stopped_ = false;
};

}  // namespace latch
