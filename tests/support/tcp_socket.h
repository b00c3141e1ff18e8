#pragma once
// A plain loopback TCP client socket for tests that misbehave on purpose: a tiny receive
// buffer, reading slowly or never, sending half a request, opening thousands of sockets.
// Every wait is bounded (poll with a deadline). POSIX only, no protocol knowledge.
#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

namespace latch::test {

class TcpSocket {
 public:
  TcpSocket() = default;
  // Connects to 127.0.0.1:port; rcvbuf > 0 sets SO_RCVBUF before connecting (the kernel
  // doubles it and keeps a minimum). Check ok().
  explicit TcpSocket(int port, int rcvbuf = 0);
  ~TcpSocket();
  TcpSocket(TcpSocket&& other) noexcept;
  TcpSocket& operator=(TcpSocket&& other) noexcept;
  TcpSocket(const TcpSocket&) = delete;
  TcpSocket& operator=(const TcpSocket&) = delete;

  bool ok() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  void Close();

  // Writes all of `bytes` within `timeout`; false on error or timeout.
  bool SendAll(std::string_view bytes,
               std::chrono::milliseconds timeout = std::chrono::milliseconds(5000));
  // Appends up to `max` bytes that arrive within `timeout` to *out (waits for the first
  // byte only). Returns the count; 0 on timeout; -1 on end of stream or error.
  long ReadSome(std::string* out, std::size_t max, std::chrono::milliseconds timeout);
  // True when the peer closed (EOF or reset) within `timeout`; data before it is dropped.
  bool WaitClosed(std::chrono::milliseconds timeout);

 private:
  int fd_ = -1;
};

}  // namespace latch::test
