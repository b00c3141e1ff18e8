#pragma once
// A server binary (redis-server or latchd) run by a test as a child process on a loopback
// port picked at run time. Unlike tests/support's ServerProcess it can be paused (SIGSTOP, to
// play a slow server), killed and restarted on the same port, which the client's fault
// tests need. Every wait is bounded.
#include <sys/types.h>

#include <cstddef>
#include <string>
#include <vector>

namespace latch::test {

class ChildServer {
 public:
  enum class Kind { kRedis, kLatchd };

  // Starts at once on a free port; check ok().
  explicit ChildServer(Kind kind, std::vector<std::string> extra_args = {});
  ~ChildServer();  // SIGKILL and reap
  ChildServer(const ChildServer&) = delete;
  ChildServer& operator=(const ChildServer&) = delete;

  bool ok() const { return pid_ > 0; }
  const std::string& error() const { return error_; }
  int port() const { return port_; }
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }

  void Kill();     // SIGKILL + reap; the port stays reserved for Restart()
  bool Restart();  // on the same port; false (and error()) if it did not answer PING
  void Pause();    // SIGSTOP: connections stay open, nothing is answered
  void Resume();   // SIGCONT

 private:
  bool Start(int port);
  std::vector<std::string> Argv(int port) const;

  Kind kind_;
  std::vector<std::string> extra_args_;
  pid_t pid_ = -1;
  int port_ = 0;
  bool paused_ = false;
  std::string error_;
};

// Sends PING over a fresh TCP connection; true on +PONG (or -NOAUTH) within timeout_ms.
bool Pingable(int port, int timeout_ms);

// The bytes that the kernel holds, unread, for the server's end of the connections to
// 127.0.0.1:port (/proc/net/tcp's rx_queue): how a test knows that a request has reached a
// paused server.
std::size_t UnreadBytesAtServer(int port);

}  // namespace latch::test
