// latch::Server: starts the listeners and the workers, and shuts everything down in order
// (server_impl.h; the accepts are in server_accept.cpp).
#include "latch/server.h"

#include <spdlog/logger.h>

#include <atomic>
#include <bit>
#include <boost/asio/post.hpp>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "acl/acl_file.h"
#include "cluster_node.h"
#include "commands/command_table.h"
#include "journal/persistence.h"
#include "net/connection.h"
#include "net/metrics_http.h"
#include "net/tls_config_set.h"
#include "net/tls_context.h"
#include "net/unix_listener.h"
#include "net/uring_ring.h"
#include "net/worker.h"
#include "rest/rest_endpoint.h"
#include "scripting/script_engine.h"
#include "server_impl.h"
#include "server_state.h"
#include "state_wiring.h"

namespace latch {

namespace asio = boost::asio;

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

ServerImpl::ServerImpl(Options o)
    : clock_(o.clock ? o.clock : std::make_shared<SystemClock>()),
      threads_(ResolveThreads(o.io_threads)),
      shards_(ResolveShards(o.shards, threads_)),
      state_(std::move(o), clock_, shards_, threads_) {
  WireUpperParts(state_, table_);
  state_.request_shutdown = [this] { RequestShutdown(); };
  state_.reload_tls = [this](const Options& updated, std::span<const std::string_view> args) {
    return ReloadTlsForConfigSet(state_, updated, args);
  };
}

ServerImpl::~ServerImpl() { Stop(); }

int ServerImpl::Start() {
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

int ServerImpl::StartServing(bool* started) {
  std::lock_guard lock(mu_);
  if (running_) return state_.tcp_port;
  acl::LoadUsersAtStartup(state_);  // throws on a broken user line or aclfile
  *started = true;
  ListenConfig c = ReadListenConfig();
  if (c.uring) {
    // Before anything listens: a kernel that refuses io_uring (io_uring_disabled, a seccomp
    // filter, a kernel before 5.6) stops the start with the reason, as a bad TLS file does.
    if (const std::string why = UringRing::Probe(); !why.empty()) {
      throw std::runtime_error("io-engine uring is not available: " + why);
    }
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
      c.restart_delay > 0 ? state_.clock->MonoMs() + c.restart_delay : 0);
  if (state_.scripting) state_.scripting->ResetShutdown();  // no worker runs yet
  // A cluster node (raft-peers) joins its cluster before anything listens or any worker
  // runs: its log listens on the key events, and it serves as a follower until elected.
  cluster::StartNode(state_);
  std::string rest_first;
  const std::string first = OpenAllListeners(c, &rest_first);
  StartWorkers(c.uring);
  // -LOADING until the journal is loaded (Start); without one there is nothing to load, and a
  // client that connects as soon as the port opens gets its PONG, as from Redis.
  state_.loading = c.journal_to_load;
  StartAccepting();
  accept_thread_ = std::thread([this] { accept_ctx_.run(); });
  running_ = true;
  shutdown_requested_ = false;
  SetStopped(false);
  LogListening(first, rest_first, c.unixsocket);
  return state_.tcp_port;
}

ServerImpl::ListenConfig ServerImpl::ReadListenConfig() {
  ListenConfig c;
  std::lock_guard olock(state_.options_mu);
  const Options& o = state_.options;
  c.tls_port = o.tls_port;
  if (c.tls_port != 0) state_.tls = MakeTlsSlot(o);
  c.bind = o.bind;
  c.port = o.port;
  c.metrics_port = o.metrics_port;
  backlog_ = o.tcp_backlog;
  c.rest_port = o.rest_port;
  c.rest_bind = o.rest_bind.empty() ? c.bind : o.rest_bind;
  c.unixsocket = o.unixsocket;
  c.unixsocketperm = o.unixsocketperm;
  c.journal_to_load = o.appendonly;
  c.restart_delay = o.lock_restart_delay;
  c.uring = o.io_engine == "uring";
  return c;
}

void ServerImpl::StartWorkers(bool uring) {
  for (int i = 0; i < threads_; ++i) {
    workers_.push_back(std::make_unique<Worker>(i, state_, uring));
    rest_sessions_.push_back(std::make_unique<rest::SessionSet>());
  }
  for (int i = 0; i < threads_; ++i) {
    std::vector<int> shards;
    for (int s = i; s < state_.dbs.shards_per_db(); s += threads_) shards.push_back(s);
    workers_[static_cast<std::size_t>(i)]->Start(std::move(shards));
  }
}

void ServerImpl::LogListening(const std::string& first, const std::string& rest_first,
                              const std::string& unixsocket) {
  state_.log->info("Listening on {}:{} with {} io-threads and {} shards", first, state_.tcp_port,
                   threads_, state_.dbs.shards_per_db());
  if (state_.metrics_port > 0) {
    state_.log->info("Prometheus metrics on http://{}:{}/metrics", first, state_.metrics_port);
  }
  if (!workers_.empty() && workers_.front()->ring() != nullptr) {
    state_.log->info("io-engine uring: plain client connections on one io_uring per io thread");
  }
  if (unix_) state_.log->info("The server is now ready to accept connections at {}", unixsocket);
  if (rest_port_ > 0) {
    state_.log->info("Upstash-compatible REST API on http://{}:{}/", rest_first, rest_port_);
  }
  if (tls_port_ > 0) state_.log->info("Listening for TLS clients on port {}", tls_port_);
}

void ServerImpl::Stop() {
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
void ServerImpl::RequestShutdown() {
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

void ServerImpl::Wait() {
  std::unique_lock lock(wait_mu_);
  wait_cv_.wait(lock, [this] { return stopped_; });
}

// The TLS settings must load before anything listens: a bad file stops the start, with
// Redis's log lines, and the reason in the exception.
std::shared_ptr<TlsContextSlot> ServerImpl::MakeTlsSlot(const Options& o) {
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
void ServerImpl::CloseRestSessions() {
  for (std::size_t i = 0; i < workers_.size(); ++i) {
    asio::post(workers_[i]->context(), [set = rest_sessions_[i].get()] { set->CloseAll(); });
  }
}

void ServerImpl::SetStopped(bool stopped) {
  {
    std::lock_guard wait_lock(wait_mu_);
    stopped_ = stopped;
  }
  if (stopped) wait_cv_.notify_all();
}

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
