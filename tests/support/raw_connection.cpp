#include "support/raw_connection.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "support/resp_frame.h"

namespace latch::test {

using Clock = std::chrono::steady_clock;

RawConnection::RawConnection(int port, std::chrono::milliseconds timeout) : timeout_(timeout) {
  Connect(port);
}

RawConnection::~RawConnection() { Close(); }

RawConnection::RawConnection(RawConnection&& other) noexcept
    : timeout_(other.timeout_),
      fd_(std::exchange(other.fd_, -1)),
      buffer_(std::move(other.buffer_)),
      error_(std::move(other.error_)) {}

RawConnection& RawConnection::operator=(RawConnection&& other) noexcept {
  if (this != &other) {
    Close();
    timeout_ = other.timeout_;
    fd_ = std::exchange(other.fd_, -1);
    buffer_ = std::move(other.buffer_);
    error_ = std::move(other.error_);
  }
  return *this;
}

void RawConnection::Close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  buffer_.clear();
}

int RawConnection::RemainingMs(Clock::time_point deadline) const {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return left.count() > 0 ? static_cast<int>(left.count()) : 0;
}

bool RawConnection::Connect(int port) {
  Close();
  error_.clear();
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd_ < 0) {
    error_ = std::string("socket: ") + std::strerror(errno);
    return false;
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  const auto deadline = Clock::now() + timeout_;
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    if (errno != EINPROGRESS) {
      error_ = "connect to port " + std::to_string(port) + ": " + std::strerror(errno);
      Close();
      return false;
    }
    pollfd p{fd_, POLLOUT, 0};
    int ready = ::poll(&p, 1, RemainingMs(deadline));
    int so_error = 0;
    socklen_t len = sizeof(so_error);
    if (ready <= 0 || ::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &so_error, &len) != 0 ||
        so_error != 0) {
      error_ = "connect to port " + std::to_string(port) + ": " +
               (ready <= 0 ? "timed out" : std::strerror(so_error));
      Close();
      return false;
    }
  }
  int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return true;
}

bool RawConnection::Send(std::string_view bytes) {
  if (fd_ < 0) {
    error_ = "not connected";
    return false;
  }
  const auto deadline = Clock::now() + timeout_;
  while (!bytes.empty()) {
    ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n > 0) {
      bytes.remove_prefix(static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p{fd_, POLLOUT, 0};
      if (::poll(&p, 1, RemainingMs(deadline)) <= 0) {
        error_ = "send timed out";
        return false;
      }
      continue;
    }
    error_ = std::string("send: ") + std::strerror(errno);
    return false;
  }
  return true;
}

bool RawConnection::Fill(Clock::time_point deadline) {
  char chunk[16384];
  while (true) {
    ssize_t n = ::recv(fd_, chunk, sizeof(chunk), 0);
    if (n > 0) {
      buffer_.append(chunk, static_cast<std::size_t>(n));
      return true;
    }
    if (n == 0) {
      error_ = "connection closed by peer";
      return false;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      error_ = std::string("recv: ") + std::strerror(errno);
      return false;
    }
    pollfd p{fd_, POLLIN, 0};
    int ready = ::poll(&p, 1, RemainingMs(deadline));
    if (ready == 0) {
      error_ = "timed out after " + std::to_string(timeout_.count()) + " ms";
      return false;
    }
    if (ready < 0 && errno != EINTR) {
      error_ = std::string("poll: ") + std::strerror(errno);
      return false;
    }
  }
}

std::optional<std::string> RawConnection::ReadReply() {
  if (fd_ < 0) {
    error_ = "not connected";
    return std::nullopt;
  }
  const auto deadline = Clock::now() + timeout_;
  while (true) {
    RespFrame frame = FrameReply(buffer_);
    if (frame.status == RespFrame::Status::kComplete) {
      std::string reply = buffer_.substr(0, frame.length);
      buffer_.erase(0, frame.length);
      return reply;
    }
    if (frame.status == RespFrame::Status::kMalformed) {
      error_ = "malformed reply (" + frame.error + "): " + buffer_.substr(0, 200);
      return std::nullopt;
    }
    if (!Fill(deadline)) {
      if (!buffer_.empty()) error_ += "; partial reply: " + buffer_.substr(0, 200);
      return std::nullopt;
    }
  }
}

bool RawConnection::WaitClosed(std::string* trailing) {
  if (fd_ < 0) return true;
  const auto deadline = Clock::now() + timeout_;
  while (Fill(deadline)) {
  }
  if (trailing != nullptr) *trailing = buffer_;
  buffer_.clear();
  return error_ == "connection closed by peer" || error_.rfind("recv: ", 0) == 0;
}

std::string RawConnection::Encode(const std::vector<std::string>& args) {
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (const std::string& arg : args) {
    out += "$" + std::to_string(arg.size()) + "\r\n";
    out += arg;
    out += "\r\n";
  }
  return out;
}

std::string RawConnection::CommandArgs(const std::vector<std::string>& args) {
  if (!Send(Encode(args))) return "<no reply: " + error_ + ">";
  std::optional<std::string> reply = ReadReply();
  if (!reply) return "<no reply: " + error_ + ">";
  return *reply;
}

std::string InfoField(RawConnection& c, const std::string& section, const std::string& field) {
  const std::string r = c.Command("INFO", section);
  auto pos = r.find("\r\n" + field + ":");  // a whole field name, at the start of its line
  if (pos == std::string::npos) return "<missing>";
  pos += field.size() + 3;
  return r.substr(pos, r.find("\r\n", pos) - pos);
}

}  // namespace latch::test
