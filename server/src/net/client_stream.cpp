#include "net/client_stream.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "net/tls_session.h"

namespace latch {

namespace {
using boost::asio::ip::tcp;

tcp::endpoint SocketName(int fd, bool peer, boost::system::error_code& ec) {
  tcp::endpoint endpoint;
  socklen_t len = static_cast<socklen_t>(endpoint.capacity());
  const int r =
      peer ? ::getpeername(fd, endpoint.data(), &len) : ::getsockname(fd, endpoint.data(), &len);
  if (r != 0 || len > endpoint.capacity()) {
    ec.assign(r != 0 ? errno : EINVAL, boost::system::system_category());
    return tcp::endpoint();
  }
  ec.clear();
  endpoint.resize(len);
  return endpoint;
}
}  // namespace

ClientStream::ClientStream(tcp::socket socket, std::shared_ptr<TlsContext> tls, UringRing* ring)
    : socket_(std::move(socket)) {
  if (tls) {
    tls_ = std::make_unique<TlsSession>(socket_, std::move(tls));
    return;
  }
  if (ring == nullptr) return;
  // Off Asio's reactor: otherwise epoll would report every segment this socket receives to a
  // reactor that has nothing queued for it.
  boost::system::error_code ec;
  const int fd = socket_.release(ec);
  if (ec || fd < 0) return;  // a stream that is not open: its operations fail at once
  ring_ = ring;
  fd_ = fd;
  // Blocking, as io_uring expects of a socket it polls itself.
  const int flags = ::fcntl(fd_, F_GETFL);
  if (flags >= 0 && (flags & O_NONBLOCK) != 0) ::fcntl(fd_, F_SETFL, flags & ~O_NONBLOCK);
}

ClientStream::~ClientStream() {
  if (fd_ >= 0) ::close(fd_);
}

void ClientStream::SetNoDelay() {
  if (ring_ == nullptr) {
    boost::system::error_code ec;
    socket_.set_option(tcp::no_delay(true), ec);
    return;
  }
  const int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

tcp::endpoint ClientStream::RemoteEndpoint(boost::system::error_code& ec) {
  if (ring_ == nullptr) return socket_.remote_endpoint(ec);
  return SocketName(fd_, true, ec);
}

tcp::endpoint ClientStream::LocalEndpoint(boost::system::error_code& ec) {
  if (ring_ == nullptr) return socket_.local_endpoint(ec);
  return SocketName(fd_, false, ec);
}

void ClientStream::Close() {
  boost::system::error_code ec;
  if (ring_ == nullptr) {
    socket_.shutdown(tcp::socket::shutdown_both, ec);
    socket_.close(ec);
    return;
  }
  if (fd_ < 0 || closing_) return;
  closing_ = true;
  // A receive in flight ends (0 bytes) and a send fails once the socket is shut down; the
  // cancels make sure. The descriptor stays open while an operation may still name it: a
  // number closed under a queued entry could be a new client's socket by the time it is
  // submitted.
  ::shutdown(fd_, SHUT_RDWR);
  ring_->Cancel(read_op_);
  ring_->Cancel(write_op_);
  if (!read_op_.pending() && !write_op_.pending()) {
    ::close(fd_);
    fd_ = -1;
  }
}

void ClientStream::AsyncHandshake(HandshakeHandler handler) {
  tls_->stream.async_handshake(boost::asio::ssl::stream_base::server, std::move(handler));
}

std::chrono::milliseconds ClientStream::handshake_timeout() const {
  return tls_->context->handshake_timeout;
}

void ClientStream::TlsReadSome(boost::asio::mutable_buffer buffer, IoHandler handler) {
  tls_->stream.async_read_some(buffer, std::move(handler));
}

void ClientStream::TlsWriteSome(boost::asio::const_buffer buffer, IoHandler handler) {
  tls_->stream.async_write_some(buffer, std::move(handler));
}

}  // namespace latch
