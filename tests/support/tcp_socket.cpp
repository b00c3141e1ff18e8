#include "support/tcp_socket.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

namespace latch::test {
namespace {
using SteadyClock = std::chrono::steady_clock;

int MsLeft(SteadyClock::time_point deadline) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::now());
  return left.count() > 0 ? static_cast<int>(left.count()) : 0;
}

bool WaitFor(int fd, short events, SteadyClock::time_point deadline) {
  pollfd p{fd, events, 0};
  for (;;) {
    const int r = ::poll(&p, 1, MsLeft(deadline));
    if (r > 0) return true;
    if (r == 0) return false;
    if (errno != EINTR) return false;
  }
}
}  // namespace

TcpSocket::TcpSocket(int port, int rcvbuf) {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) return;
  if (rcvbuf > 0) ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) Close();
}

TcpSocket::~TcpSocket() { Close(); }

TcpSocket::TcpSocket(TcpSocket&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

TcpSocket& TcpSocket::operator=(TcpSocket&& other) noexcept {
  if (this != &other) {
    Close();
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

void TcpSocket::Close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

bool TcpSocket::SendAll(std::string_view bytes, std::chrono::milliseconds timeout) {
  const auto deadline = SteadyClock::now() + timeout;
  while (!bytes.empty() && fd_ >= 0) {
    if (!WaitFor(fd_, POLLOUT, deadline)) return false;
    const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      return false;
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return bytes.empty();
}

long TcpSocket::ReadSome(std::string* out, std::size_t max, std::chrono::milliseconds timeout) {
  if (fd_ < 0) return -1;
  if (!WaitFor(fd_, POLLIN, SteadyClock::now() + timeout)) return 0;
  const std::size_t old = out->size();
  out->resize(old + max);
  const ssize_t n = ::recv(fd_, out->data() + old, max, MSG_DONTWAIT);
  out->resize(old + (n > 0 ? static_cast<std::size_t>(n) : 0));
  if (n == 0) return -1;
  if (n < 0) return errno == EAGAIN || errno == EINTR ? 0 : -1;
  return static_cast<long>(n);
}

bool TcpSocket::WaitClosed(std::chrono::milliseconds timeout) {
  const auto deadline = SteadyClock::now() + timeout;
  std::string sink;
  while (SteadyClock::now() < deadline) {
    sink.clear();
    if (ReadSome(&sink, 1 << 20, std::chrono::milliseconds(MsLeft(deadline))) < 0) return true;
  }
  return false;
}

}  // namespace latch::test
