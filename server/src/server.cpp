// latch::Server: binds the listener, starts the workers, hands each accepted socket to a
// worker round-robin, and shuts everything down in order.
#include "latch/server.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <spdlog/logger.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <bit>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "acl/acl_file.h"
#include "cluster/cluster_hooks.h"
#include "commands/command_table.h"
#include "commands/errors.h"
#include "commands/peer_address.h"
#include "config/config_directives.h"
#include "journal/persistence.h"
#include "net/connection.h"
#include "net/listener.h"
#include "net/metrics_http.h"
#include "net/protected_mode.h"
#include "net/tls_config_set.h"
#include "net/tls_context.h"
#include "net/unix_listener.h"
#include "net/worker.h"
#include "rest/rest_endpoint.h"
#include "scripting/script_engine.h"
#include "server_state.h"
#include "testing/fault_hook.h"

namespace latch {

namespace asio = boost::asio;
using asio::ip::tcp;

namespace {
int ResolveThreads(int configured) {
  if (configured > 0) return configured;
  unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw);
}
int ResolveShards(int configured, int threads) {
  if (configured > 0) return configured;
  return static_cast<int>(std::bit_ceil(static_cast<unsigned>(threads * 16)));
}
}  // namespace

class ServerImpl {
 public:
  explicit ServerImpl(Options o)
      : clock_(o.clock ? o.clock : std::make_shared<SystemClock>()),
        threads_(ResolveThreads(o.io_threads)),
        shards_(ResolveShards(o.shards, threads_)),
        state_(std::move(o), clock_, shards_, threads_) {
    table_.SetInterceptor(&testing::InterceptCommand);  // TEST.FAULT (test mode)
    state_.commands = &table_;
    state_.catalogue = &table_;
    state_.request_shutdown = [this] { RequestShutdown(); };
    state_.reload_tls = [this](const Options& updated, std::span<const std::string_view> args) {
      return ReloadTlsForConfigSet(state_, updated, args);
    };
  }

  ~ServerImpl() { Stop(); }

  // Serves, then loads the journal while clients get -LOADING (as Redis does); a journal that
  // cannot be loaded stops everything again and throws.
  int Start() {
    bool started = false;
    const int port = StartServing(&started);
    if (!started) return port;  // already running: the journal is loaded
    try {
      state_.persistence->Start();
    } catch (...) {
      Stop();
      state_.loading = false;
      throw;
    }
    state_.loading = false;
    return port;
  }

  int StartServing(bool* started) {
    std::lock_guard lock(mu_);
    if (running_) return state_.tcp_port;
    acl::LoadUsersAtStartup(state_);  // throws on a broken user line or aclfile
    *started = true;
    std::string bind, rest_bind, unixsocket;
    int port, metrics_port, rest_port, tls_port, unixsocketperm;
    bool journal_to_load;
    std::int64_t restart_delay;
    {
      std::lock_guard olock(state_.options_mu);
      tls_port = state_.options.tls_port;
      if (tls_port != 0) state_.tls = MakeTlsSlot(state_.options);
      bind = state_.options.bind;
      port = state_.options.port;
      metrics_port = state_.options.metrics_port;
      backlog_ = state_.options.tcp_backlog;
      rest_port = state_.options.rest_port;
      rest_bind = state_.options.rest_bind.empty() ? bind : state_.options.rest_bind;
      unixsocket = state_.options.unixsocket;
      unixsocketperm = state_.options.unixsocketperm;
      journal_to_load = state_.options.appendonly;
      restart_delay = state_.options.lock_restart_delay;
    }
    // A server can be started again after stop(): run what an earlier run left queued
    // (a SHUTDOWN's close that came after the accept thread ended) before the new listener
    // exists, then make the context runnable again.
    accept_ctx_.restart();
    accept_ctx_.poll();
    accept_ctx_.restart();
    // lock-restart-delay is armed before anything listens. It once was armed after the journal
    // load, while a server without a journal already served: a client that connected in that
    // gap was granted a key that the killed process had leased 318 ms before (the chaos test's
    // overlap). Counting from here is enough: every lease of the previous process was granted
    // before it died, so before this start.
    state_.grants_held_until_mono_ms.store(
        restart_delay > 0 ? state_.clock->MonoMs() + restart_delay : 0);
    if (state_.scripting) state_.scripting->ResetShutdown();  // no worker runs yet
    // A cluster node (raft-peers) joins its cluster before anything listens or any worker
    // runs: its log listens on the key events, and it serves as a follower until elected.
    cluster::StartNode(state_);
    // As Redis: with a TLS port, port 0 means no plain listener (an embedded server asks for
    // a free TLS port with tls_port -1, and keeps port 0's meaning of a free plain port).
    std::string first;
    if (port != 0 || tls_port <= 0) first = OpenListeners(bind, port, "server TCP", acceptors_);
    state_.tcp_port = acceptors_.empty() ? 0 : port;
    std::string rest_first;
    try {
      if (tls_port != 0) {
        tls_port_ = tls_port < 0 ? 0 : tls_port;
        const std::string tls_first = OpenListeners(bind, tls_port_, "server TLS", tls_acceptors_);
        if (first.empty()) first = tls_first;
      }
      if (rest_port > 0) {
        rest_first = OpenListeners(rest_bind, rest_port, "REST", rest_acceptors_);
        rest_port_ = rest_port;
      }
      unix_.reset();
      if (!unixsocket.empty()) {
        unix_ = std::make_unique<UnixListener>(accept_ctx_);
        unix_->Open(unixsocket, unixsocketperm, backlog_);
      }
      if (metrics_port > 0) state_.metrics_port = metrics_.Start(first, metrics_port);
    } catch (...) {
      if (unix_) unix_->Close();
      unix_.reset();
      acceptors_.clear();
      rest_acceptors_.clear();
      tls_acceptors_.clear();
      throw;
    }
    for (int i = 0; i < threads_; ++i) {
      workers_.push_back(std::make_unique<Worker>(i, state_));
      rest_sessions_.push_back(std::make_unique<rest::SessionSet>());
    }
    for (int i = 0; i < threads_; ++i) {
      std::vector<int> shards;
      for (int s = i; s < state_.dbs.shards_per_db(); s += threads_) shards.push_back(s);
      workers_[static_cast<std::size_t>(i)]->Start(std::move(shards));
    }
    // -LOADING until the journal is loaded (Start); without one there is nothing to load, and a
    // client that connects as soon as the port opens gets its PONG, as from Redis.
    state_.loading = journal_to_load;
    for (auto& a : acceptors_) Accept(*a, Endpoint::kResp);
    for (auto& a : rest_acceptors_) Accept(*a, Endpoint::kRest);
    for (auto& a : tls_acceptors_) Accept(*a, Endpoint::kTls);
    if (unix_) AcceptUnix();
    accept_thread_ = std::thread([this] { accept_ctx_.run(); });
    running_ = true;
    shutdown_requested_ = false;
    SetStopped(false);
    state_.log->info("Listening on {}:{} with {} io-threads and {} shards", first, state_.tcp_port,
                 threads_, state_.dbs.shards_per_db());
    if (state_.metrics_port > 0) {
      state_.log->info("Prometheus metrics on http://{}:{}/metrics", first, state_.metrics_port);
    }
    if (unix_) state_.log->info("The server is now ready to accept connections at {}", unixsocket);
    if (rest_port_ > 0) {
      state_.log->info("Upstash-compatible REST API on http://{}:{}/", rest_first, rest_port_);
    }
    if (tls_port_ > 0) state_.log->info("Listening for TLS clients on port {}", tls_port_);
    return state_.tcp_port;
  }

  void Stop() {
    std::unique_lock lock(mu_);
    if (!running_) return;
    running_ = false;
    // Closing the acceptor aborts the pending accept; its handler then runs (and returns),
    // so run() ends by itself with no operation left behind. Stopping the context instead
    // would leave the aborted accept queued, holding a socket of a worker's io_context, to be
    // destroyed after that worker is gone.
    CloseAcceptor();
    if (accept_thread_.joinable()) accept_thread_.join();
    metrics_.Stop();
    CloseRestSessions();
    // A running script would keep its worker from ever seeing the shutdown (SIGTERM during
    // `while true do end`): stop it, written or not, as SHUTDOWN NOSAVE does.
    scripting::EngineFor(state_).KillForShutdown();
    state_.faults.Resume();  // a thread stopped at a stall point (test mode) would hold its worker
    for (auto& w : workers_) w->Shutdown();
    for (auto& w : workers_) w->Join();
    // The script thread posts its last reply to a worker's io_context: joined before they go.
    if (state_.scripting) state_.scripting->StopThread();
    // Before the workers' io_contexts go: the journal's last completions are posted there,
    // and so are the Raft log's.
    cluster::StopNode(state_);
    state_.persistence->Stop();
    workers_.clear();
    rest_sessions_.clear();  // after the workers' contexts, whose sessions unregister here
    SetStopped(true);
  }

  // SHUTDOWN, from a worker thread in the middle of a command: closes the listener and every
  // connection and wakes Wait(); the owner's Stop() (or the destructor) joins the threads.
  // Takes no lock that Stop() holds while it joins, so a concurrent Stop() cannot deadlock
  // with it: workers_ is only changed by Stop() after every worker thread has ended.
  void RequestShutdown() {
    if (shutdown_requested_.exchange(true)) return;
    state_.log->warn("User requested shutdown...");
    CloseRestSessions();
    // A script running on another worker (busy or not yet) would hold that worker forever.
    scripting::EngineFor(state_).KillForShutdown();
    for (auto& w : workers_) w->Shutdown();
    // Wait() returns only once the listener is really closed: a caller that sees wait()
    // return and connects must be refused (a late SetStopped here let one connection in).
    // If Stop() already ended the accept thread, the post never runs, and Stop() itself
    // closed the acceptor and wakes Wait().
    asio::post(accept_ctx_, [this] {
      CloseAcceptorsNow();
      SetStopped(true);
    });
  }

  void Wait() {
    std::unique_lock lock(wait_mu_);
    wait_cv_.wait(lock, [this] { return stopped_; });
  }

  int port() const { return state_.tcp_port; }
  int metrics_port() const { return state_.metrics_port; }
  int rest_port() const { return rest_port_; }
  int tls_port() const { return tls_port_; }
  int io_threads() const { return threads_; }
  int shards() const { return shards_; }
  const Clock& clock() const { return *clock_; }
  ServerState& state() { return state_; }

 private:
  // Opens one listener per bind address into `out` (all on one port: the first one's when
  // port is 0, written back to `port`) and returns the first address listened on. An address
  // marked optional ('-') that the host does not have is skipped, as Redis does; any other
  // failure throws.
  std::string OpenListeners(const std::string& bind, int& port, const std::string& what,
                            std::vector<std::unique_ptr<tcp::acceptor>>& out) {
    out.clear();
    std::string first;
    for (const config::BindAddress& a : config::SplitBindAddresses(bind)) {
      auto acceptor = std::make_unique<tcp::acceptor>(accept_ctx_);
      try {
        port = OpenListener(*acceptor, config::ListenAddress(a), port, backlog_, what);
      } catch (const ListenError& e) {
        namespace errc = boost::system::errc;
        if (a.optional && (e.code() == errc::address_not_available ||
                           e.code() == errc::address_family_not_supported ||
                           e.code() == errc::protocol_not_supported)) {
          state_.log->warn("Skipping optional bind address {}: {}", a.address, e.code().message());
          continue;
        }
        out.clear();
        throw;
      }
      if (first.empty()) first = config::ListenAddress(a);
      out.push_back(std::move(acceptor));
    }
    if (out.empty()) {
      throw std::runtime_error("Could not create " + what + " listening socket: none of the "
                               "bind addresses '" + bind + "' is available");
    }
    return first;
  }

  // On the acceptors' thread, which is the only one that touches them once it runs.
  void CloseAcceptor() {
    asio::post(accept_ctx_, [this] { CloseAcceptorsNow(); });
  }
  void CloseAcceptorsNow() {
    boost::system::error_code ec;
    for (auto& a : acceptors_) a->close(ec);
    for (auto& a : rest_acceptors_) a->close(ec);
    for (auto& a : tls_acceptors_) a->close(ec);
    if (unix_) unix_->Close();  // removes the socket file, as Redis at shutdown
  }

  // The TLS settings must load before anything listens: a bad file stops the start, with
  // Redis's log lines, and the reason in the exception.
  std::shared_ptr<TlsContextSlot> MakeTlsSlot(const Options& o) {
    std::string error;
    std::shared_ptr<TlsContext> context = BuildTlsContext(o, &error);
    if (!context) {
      state_.log->warn("{}", error);
      state_.log->warn("Failed to configure TLS. Check logs for more info.");
      throw std::runtime_error("Failed to configure TLS: " + error);
    }
    return std::make_shared<TlsContextSlot>(std::move(context));
  }

  // Each worker closes its REST sessions before its own Shutdown (posted in this order, so it
  // runs first) stops its context.
  void CloseRestSessions() {
    for (std::size_t i = 0; i < workers_.size(); ++i) {
      asio::post(workers_[i]->context(), [set = rest_sessions_[i].get()] { set->CloseAll(); });
    }
  }

  void SetStopped(bool stopped) {
    {
      std::lock_guard wait_lock(wait_mu_);
      stopped_ = stopped;
    }
    if (stopped) wait_cv_.notify_all();
  }

  // kRest: an HTTP connection of the REST endpoint, served on the worker like a RESP one.
  enum class Endpoint { kResp, kRest, kTls };
  void Accept(tcp::acceptor& acceptor, Endpoint kind) {
    const std::size_t i = next_worker_;
    Worker& w = *workers_[i];
    next_worker_ = (next_worker_ + 1) % workers_.size();
    acceptor.async_accept(w.context(), [this, i, kind, &acceptor](
                                           const boost::system::error_code& ec,
                                           tcp::socket socket) {
      if (ec == asio::error::operation_aborted || !acceptor.is_open()) return;
      if (ec == asio::error::no_descriptors ||
          ec == boost::system::errc::too_many_files_open_in_system) {
        BackOffAccept(acceptor, ec, kind);
        return;
      }
      if (!ec) OnAccept(i, std::move(socket), kind);
      Accept(acceptor, kind);
    });
  }

  // Out of descriptors (EMFILE/ENFILE): the pending connection stays in the backlog and
  // every retry would fail at once, so wait before the next accept instead of spinning.
  void BackOffAccept(tcp::acceptor& acceptor, const boost::system::error_code& ec, Endpoint kind) {
    state_.log->warn("Accepting client connection: accept: {}", ec.message());
    auto timer = std::make_shared<asio::steady_timer>(accept_ctx_, std::chrono::milliseconds(100));
    timer->async_wait([this, timer, kind, &acceptor](const boost::system::error_code& wait_ec) {
      if (!wait_ec && acceptor.is_open()) Accept(acceptor, kind);
    });
  }

  // Replies `error` on the new socket and closes it, as Redis does for refused clients.
  template <class Socket>
  static void Refuse(Socket& socket, std::string_view error) {
    boost::system::error_code ec;
    socket.non_blocking(true, ec);
    socket.write_some(asio::buffer(error.data(), error.size()), ec);
    socket.close(ec);
  }

  // protected-mode and tcp-keepalive, read per accept: both can change with CONFIG SET.
  // Returns false when the client was refused.
  bool ApplyListenOptions(tcp::socket& socket) {
    bool protect;
    int keepalive;
    {
      std::lock_guard olock(state_.options_mu);
      protect = state_.options.protected_mode && state_.options.requirepass.empty();
      keepalive = state_.options.tcp_keepalive;
    }
    boost::system::error_code ec;
    if (protect) {
      const tcp::endpoint peer = socket.remote_endpoint(ec);
      if (!ec && !IsLoopbackPeer(peer.address())) {
        Refuse(socket, kProtectedModeDenied);
        return false;
      }
    }
    if (keepalive > 0) SetKeepalive(socket, keepalive);
    return true;
  }

  // Redis's settings: probes start after `seconds` idle, every seconds/3, 3 of them.
  static void SetKeepalive(tcp::socket& socket, int seconds) {
    boost::system::error_code ec;
    socket.set_option(asio::socket_base::keep_alive(true), ec);
    const int fd = socket.native_handle();
    const int interval = seconds / 3 > 0 ? seconds / 3 : 1;
    const int count = 3;
    ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &seconds, sizeof(seconds));
    ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof(interval));
    ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof(count));
  }

  void OnAccept(std::size_t i, tcp::socket socket, Endpoint kind) {
    Worker& w = *workers_[i];
    const bool rest = kind == Endpoint::kRest;
    state_.stats.total_connections.fetch_add(1, std::memory_order_relaxed);
    if (!ApplyListenOptions(socket)) return;
    auto info = state_.clients.Add(state_.maxclients.load());
    if (!info) {
      // Redis replies the error on the new socket and closes it.
      state_.stats.rejected_connections.fetch_add(1, std::memory_order_relaxed);
      Refuse(socket, rest ? std::string(rest::MaxClientsResponse())
                          : "-" + std::string(errors::kMaxClients) + "\r\n");
      return;
    }
    if (rest) {
      asio::post(w.context(), [this, i, &w, s = std::move(socket), info]() mutable {
        boost::system::error_code ec;
        const int fd = s.release(ec);
        if (ec) return state_.clients.Remove(info->id);
        rest_sessions_[i]->Start(fd, state_, w, std::move(info));
      });
      return;
    }
    w.Adopt(std::move(socket), std::move(info),
            kind == Endpoint::kTls ? state_.tls->Current() : nullptr);
  }

  // The unixsocket listener: its clients are served exactly as TCP ones (the descriptor is
  // handed to the worker as a tcp::socket, since a Connection only reads and writes it), with
  // the socket's path as address (Redis's "addr=/path:0", flag U) and no protected-mode
  // check: a Unix socket is local by construction, as in Redis.
  void AcceptUnix() {
    const std::size_t i = next_worker_;
    next_worker_ = (next_worker_ + 1) % workers_.size();
    unix_->acceptor().async_accept(
        workers_[i]->context(),
        [this, i](const boost::system::error_code& ec, asio::local::stream_protocol::socket s) {
          if (ec == asio::error::operation_aborted || !unix_->is_open()) return;
          if (ec == asio::error::no_descriptors ||
              ec == boost::system::errc::too_many_files_open_in_system) {
            state_.log->warn("Accepting client connection: accept: {}", ec.message());
            auto timer = std::make_shared<asio::steady_timer>(accept_ctx_,
                                                              std::chrono::milliseconds(100));
            timer->async_wait([this, timer](const boost::system::error_code& wait_ec) {
              if (!wait_ec && unix_->is_open()) AcceptUnix();
            });
            return;
          }
          if (!ec) OnUnixAccept(i, std::move(s));
          AcceptUnix();
        });
  }

  void OnUnixAccept(std::size_t i, asio::local::stream_protocol::socket socket) {
    state_.stats.total_connections.fetch_add(1, std::memory_order_relaxed);
    auto info = state_.clients.Add(state_.maxclients.load());
    if (!info) {
      state_.stats.rejected_connections.fetch_add(1, std::memory_order_relaxed);
      Refuse(socket, "-" + std::string(errors::kMaxClients) + "\r\n");
      return;
    }
    {
      std::lock_guard lock(state_.clients.mu);
      info->addr = unix_->path() + ":0";
      info->laddr = info->addr;
      info->unix_socket = true;
    }
    boost::system::error_code ec;
    const int fd = socket.release(ec);
    tcp::socket as_stream(workers_[i]->context());
    if (!ec) as_stream.assign(tcp::v4(), fd, ec);
    if (ec) {
      if (fd >= 0 && !as_stream.is_open()) ::close(fd);
      state_.clients.Remove(info->id);
      return;
    }
    workers_[i]->Adopt(std::move(as_stream), std::move(info), nullptr);
  }

  std::shared_ptr<Clock> clock_;
  int threads_;
  int shards_;
  CommandTable table_;
  ServerState state_;
  MetricsHttp metrics_{state_};
  asio::io_context accept_ctx_;
  std::vector<std::unique_ptr<tcp::acceptor>> acceptors_;  // one per bind address
  std::vector<std::unique_ptr<tcp::acceptor>> rest_acceptors_;  // one per rest-bind address
  std::vector<std::unique_ptr<tcp::acceptor>> tls_acceptors_;  // one per bind address
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

Server::Server(Options options) : impl_(std::make_unique<ServerImpl>(std::move(options))) {}
Server::~Server() = default;
int Server::start() { return impl_->Start(); }
void Server::stop() { impl_->Stop(); }
void Server::wait() { impl_->Wait(); }
int Server::port() const { return impl_->port(); }
int Server::metrics_port() const { return impl_->metrics_port(); }
int Server::rest_port() const { return impl_->rest_port(); }
int Server::tls_port() const { return impl_->tls_port(); }
int Server::io_threads() const { return impl_->io_threads(); }
int Server::shards() const { return impl_->shards(); }
const Clock& Server::clock() const { return impl_->clock(); }
ServerState& InternalState(Server& server) { return server.impl_->state(); }

}  // namespace latch
