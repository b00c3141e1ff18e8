#pragma once
// A blocking TCP client for tests: sends raw bytes and reads raw RESP replies, so that a
// test sees exactly the bytes a server wrote. Every wait is bounded by the timeout given at
// construction (poll-based), so a server that never answers fails the test instead of
// hanging it. Plain POSIX sockets: no Asio, no protocol library.
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace latch::test {

class RawConnection {
 public:
  static constexpr std::chrono::milliseconds kDefaultTimeout{5000};

  explicit RawConnection(std::chrono::milliseconds timeout = kDefaultTimeout) : timeout_(timeout) {}
  // Connects to 127.0.0.1:port right away; check connected() / error().
  explicit RawConnection(int port, std::chrono::milliseconds timeout = kDefaultTimeout);
  ~RawConnection();
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;
  RawConnection(RawConnection&& other) noexcept;
  RawConnection& operator=(RawConnection&& other) noexcept;

  // Connects to 127.0.0.1:port (closing any previous connection). False on failure.
  bool Connect(int port);
  void Close();
  bool connected() const { return fd_ >= 0; }
  // What went wrong in the last failed call, for test messages.
  const std::string& error() const { return error_; }

  // Writes all of `bytes`. False on error or timeout.
  bool Send(std::string_view bytes);
  // Reads exactly one complete reply and returns its raw bytes (bytes after it stay
  // buffered for the next call). nullopt on timeout, end of stream or a malformed reply.
  std::optional<std::string> ReadReply();
  // True if the peer closes the connection within the timeout; bytes that arrive before
  // the close are discarded and returned through `trailing` when given.
  bool WaitClosed(std::string* trailing = nullptr);

  // Encodes one request as a RESP multibulk array.
  static std::string Encode(const std::vector<std::string>& args);
  // Sends one multibulk request and returns the raw reply. On failure returns a text that
  // starts with "<no reply: " and says why, so that EXPECT_EQ(conn.Command(...), "+OK\r\n")
  // fails with a readable message.
  std::string CommandArgs(const std::vector<std::string>& args);
  template <typename... Args>
  std::string Command(const Args&... args) {
    return CommandArgs(std::vector<std::string>{std::string(args)...});
  }

 private:
  // Reads whatever arrives within the remaining time into buffer_. False on EOF/timeout.
  bool Fill(std::chrono::steady_clock::time_point deadline);
  int RemainingMs(std::chrono::steady_clock::time_point deadline) const;

  std::chrono::milliseconds timeout_;
  int fd_ = -1;
  std::string buffer_;  // received but not yet returned bytes
  std::string error_;
};

// The value of `field` in the reply to INFO `section` on `c` (a line "field:value"), or
// "<missing>" when there is no such line.
std::string InfoField(RawConnection& c, const std::string& section, const std::string& field);

}  // namespace latch::test
