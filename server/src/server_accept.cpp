// latch::Server's listeners (server_impl.h): opening them, accepting, and handing each
// accepted socket to a worker round-robin, or refusing it as Redis does.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <spdlog/logger.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <stdexcept>

#include "commands/errors.h"
#include "commands/peer_address.h"
#include "config/config_directives.h"
#include "net/listener.h"
#include "net/protected_mode.h"
#include "net/tls_context.h"
#include "net/unix_listener.h"
#include "net/worker.h"
#include "rest/rest_endpoint.h"
#include "server_impl.h"

namespace latch {

namespace asio = boost::asio;
using asio::ip::tcp;

namespace {

// Replies `error` on the new socket and closes it, as Redis does for refused clients.
template <class Socket>
void RefuseAccepted(Socket& socket, std::string_view error) {
  boost::system::error_code ec;
  socket.non_blocking(true, ec);
  socket.write_some(asio::buffer(error.data(), error.size()), ec);
  socket.close(ec);
}

// Redis's settings: probes start after `seconds` idle, every seconds/3, 3 of them.
void SetKeepalive(tcp::socket& socket, int seconds) {
  boost::system::error_code ec;
  socket.set_option(asio::socket_base::keep_alive(true), ec);
  const int fd = socket.native_handle();
  const int interval = seconds / 3 > 0 ? seconds / 3 : 1;
  const int count = 3;
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &seconds, sizeof(seconds));
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof(interval));
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof(count));
}

}  // namespace

std::string ServerImpl::OpenAllListeners(ListenConfig& c, std::string* rest_first) {
  // As Redis: with a TLS port, port 0 means no plain listener (an embedded server asks for
  // a free TLS port with tls_port -1, and keeps port 0's meaning of a free plain port).
  std::string first;
  if (c.port != 0 || c.tls_port <= 0) {
    first = OpenListeners(c.bind, c.port, "server TCP", acceptors_);
  }
  state_.tcp_port = acceptors_.empty() ? 0 : c.port;
  try {
    if (c.tls_port != 0) {
      tls_port_ = c.tls_port < 0 ? 0 : c.tls_port;
      const std::string tls_first = OpenListeners(c.bind, tls_port_, "server TLS", tls_acceptors_);
      if (first.empty()) first = tls_first;
    }
    if (c.rest_port > 0) {
      *rest_first = OpenListeners(c.rest_bind, c.rest_port, "REST", rest_acceptors_);
      rest_port_ = c.rest_port;
    }
    unix_.reset();
    if (!c.unixsocket.empty()) {
      unix_ = std::make_unique<UnixListener>(accept_ctx_);
      unix_->Open(c.unixsocket, c.unixsocketperm, backlog_);
    }
    if (c.metrics_port > 0) state_.metrics_port = metrics_.Start(first, c.metrics_port);
  } catch (...) {
    if (unix_) unix_->Close();
    unix_.reset();
    acceptors_.clear();
    rest_acceptors_.clear();
    tls_acceptors_.clear();
    throw;
  }
  return first;
}

// Opens one listener per bind address into `out` (all on one port: the first one's when
// port is 0, written back to `port`) and returns the first address listened on. An address
// marked optional ('-') that the host does not have is skipped, as Redis does; any other
// failure throws.
std::string ServerImpl::OpenListeners(const std::string& bind, int& port, const std::string& what,
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
    throw std::runtime_error("Could not create " + what +
                             " listening socket: none of the "
                             "bind addresses '" +
                             bind + "' is available");
  }
  return first;
}

// On the acceptors' thread, which is the only one that touches them once it runs.
void ServerImpl::CloseAcceptor() {
  asio::post(accept_ctx_, [this] { CloseAcceptorsNow(); });
}

void ServerImpl::CloseAcceptorsNow() {
  boost::system::error_code ec;
  for (auto& a : acceptors_) a->close(ec);
  for (auto& a : rest_acceptors_) a->close(ec);
  for (auto& a : tls_acceptors_) a->close(ec);
  if (unix_) unix_->Close();  // removes the socket file, as Redis at shutdown
}

void ServerImpl::StartAccepting() {
  for (auto& a : acceptors_) Accept(*a, Endpoint::kResp);
  for (auto& a : rest_acceptors_) Accept(*a, Endpoint::kRest);
  for (auto& a : tls_acceptors_) Accept(*a, Endpoint::kTls);
  if (unix_) AcceptUnix();
}

void ServerImpl::Accept(tcp::acceptor& acceptor, Endpoint kind) {
  const std::size_t i = next_worker_;
  Worker& w = *workers_[i];
  next_worker_ = (next_worker_ + 1) % workers_.size();
  acceptor.async_accept(w.context(), [this, i, kind, &acceptor](const boost::system::error_code& ec,
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
void ServerImpl::BackOffAccept(tcp::acceptor& acceptor, const boost::system::error_code& ec,
                               Endpoint kind) {
  state_.log->warn("Accepting client connection: accept: {}", ec.message());
  auto timer = std::make_shared<asio::steady_timer>(accept_ctx_, std::chrono::milliseconds(100));
  timer->async_wait([this, timer, kind, &acceptor](const boost::system::error_code& wait_ec) {
    if (!wait_ec && acceptor.is_open()) Accept(acceptor, kind);
  });
}

// protected-mode and tcp-keepalive, read per accept: both can change with CONFIG SET.
// Returns false when the client was refused.
bool ServerImpl::ApplyListenOptions(tcp::socket& socket) {
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
      RefuseAccepted(socket, kProtectedModeDenied);
      return false;
    }
  }
  if (keepalive > 0) SetKeepalive(socket, keepalive);
  return true;
}

void ServerImpl::OnAccept(std::size_t i, tcp::socket socket, Endpoint kind) {
  Worker& w = *workers_[i];
  const bool rest = kind == Endpoint::kRest;
  state_.stats.total_connections.fetch_add(1, std::memory_order_relaxed);
  if (!ApplyListenOptions(socket)) return;
  auto info = state_.clients.Add(state_.maxclients.load());
  if (!info) {
    // Redis replies the error on the new socket and closes it.
    state_.stats.rejected_connections.fetch_add(1, std::memory_order_relaxed);
    RefuseAccepted(socket, rest ? std::string(rest::MaxClientsResponse())
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
void ServerImpl::AcceptUnix() {
  const std::size_t i = next_worker_;
  next_worker_ = (next_worker_ + 1) % workers_.size();
  unix_->acceptor().async_accept(
      workers_[i]->context(),
      [this, i](const boost::system::error_code& ec, asio::local::stream_protocol::socket s) {
        if (ec == asio::error::operation_aborted || !unix_->is_open()) return;
        if (ec == asio::error::no_descriptors ||
            ec == boost::system::errc::too_many_files_open_in_system) {
          state_.log->warn("Accepting client connection: accept: {}", ec.message());
          auto timer =
              std::make_shared<asio::steady_timer>(accept_ctx_, std::chrono::milliseconds(100));
          timer->async_wait([this, timer](const boost::system::error_code& wait_ec) {
            if (!wait_ec && unix_->is_open()) AcceptUnix();
          });
          return;
        }
        if (!ec) OnUnixAccept(i, std::move(s));
        AcceptUnix();
      });
}

void ServerImpl::OnUnixAccept(std::size_t i, asio::local::stream_protocol::socket socket) {
  state_.stats.total_connections.fetch_add(1, std::memory_order_relaxed);
  auto info = state_.clients.Add(state_.maxclients.load());
  if (!info) {
    state_.stats.rejected_connections.fetch_add(1, std::memory_order_relaxed);
    RefuseAccepted(socket, "-" + std::string(errors::kMaxClients) + "\r\n");
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

}  // namespace latch
