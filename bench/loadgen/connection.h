#pragma once
// One client connection of the load generator: write a batch of requests, read exactly as
// many replies. Errors are values (std::error_code); a coroutine that gets one stops.
#include <boost/asio.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <system_error>

#include "reply_scanner.h"

namespace latch::bench {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

inline std::int64_t NanosSince(Clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
}

class Connection {
 public:
  explicit Connection(asio::io_context& io) : socket_(io) {}

  asio::awaitable<std::error_code> Connect(const std::string& host, int port);

  // Writes `out` and reads `replies` replies, calling on_reply(const ScannedReply&) for each
  // as soon as it is complete. The ScannedReply's error view lives until on_reply returns.
  template <class OnReply>
  asio::awaitable<std::error_code> Roundtrip(const std::string& out, int replies,
                                             OnReply on_reply);

  // Closes the socket: pending reads and writes of its coroutine complete with an error.
  void Close() {
    boost::system::error_code ignored;
    socket_.close(ignored);
  }

 private:
  asio::ip::tcp::socket socket_;
  std::string in_;          // bytes received; in_[0, used_) already scanned away
  std::size_t used_ = 0;
};

template <class OnReply>
asio::awaitable<std::error_code> Connection::Roundtrip(const std::string& out, int replies,
                                                       OnReply on_reply) {
  auto [wec, written] =
      co_await asio::async_write(socket_, asio::buffer(out), asio::as_tuple(asio::use_awaitable));
  if (wec) co_return std::make_error_code(std::errc::connection_aborted);
  // Each pass either completes a reply or reads more bytes; the socket closes on errors and
  // the caller's watchdog closes it at the deadline, so the loop cannot spin forever.
  while (replies > 0) {
    ScannedReply r;
    std::ptrdiff_t n =
        ScanReply(std::string_view(in_).substr(used_), &r);
    if (n < 0) co_return std::make_error_code(std::errc::bad_message);
    if (n > 0) {
      used_ += static_cast<std::size_t>(n);
      --replies;
      on_reply(r);
      continue;
    }
    in_.erase(0, used_);
    used_ = 0;
    const std::size_t have = in_.size();
    in_.resize(have + 16 * 1024);
    auto [rec, got] = co_await socket_.async_read_some(asio::buffer(in_.data() + have, 16 * 1024),
                                                       asio::as_tuple(asio::use_awaitable));
    in_.resize(have + got);
    if (rec) co_return std::make_error_code(std::errc::connection_reset);
  }
  co_return std::error_code();
}

}  // namespace latch::bench
