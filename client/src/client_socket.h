#pragma once
// A client connection's stream: plain TCP, or TLS over it (rediss://). Meets Asio's
// AsyncReadStream/AsyncWriteStream, so asio::async_write and co_await work on either; the
// branch is per call (a client's few calls per round trip do not notice it).
#include <boost/asio/async_result.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <memory>
#include <optional>

namespace latch::client_internal {

class ClientSocket {
 public:
  using executor_type = boost::asio::ip::tcp::socket::executor_type;

  // `tls` null: plain TCP. The context must outlive the socket.
  ClientSocket(boost::asio::io_context& ctx, boost::asio::ssl::context* tls) : tcp_(ctx) {
    if (tls != nullptr) tls_.emplace(tcp_, *tls);
  }
  ClientSocket(const ClientSocket&) = delete;
  ClientSocket& operator=(const ClientSocket&) = delete;

  executor_type get_executor() { return tcp_.get_executor(); }
  boost::asio::ip::tcp::socket& tcp() { return tcp_; }
  // The TLS layer, when there is one (for the handshake's settings).
  boost::asio::ssl::stream<boost::asio::ip::tcp::socket&>* tls() { return tls_ ? &*tls_ : nullptr; }
  void close(boost::system::error_code& ec) { tcp_.close(ec); }

  template <class Buffers, class Token>
  auto async_read_some(const Buffers& buffers, Token&& token) {
    return boost::asio::async_initiate<Token, void(boost::system::error_code, std::size_t)>(
        [this](auto handler, const Buffers& b) {
          if (tls_) {
            tls_->async_read_some(b, std::move(handler));
          } else {
            tcp_.async_read_some(b, std::move(handler));
          }
        },
        token, buffers);
  }
  template <class Buffers, class Token>
  auto async_write_some(const Buffers& buffers, Token&& token) {
    return boost::asio::async_initiate<Token, void(boost::system::error_code, std::size_t)>(
        [this](auto handler, const Buffers& b) {
          if (tls_) {
            tls_->async_write_some(b, std::move(handler));
          } else {
            tcp_.async_write_some(b, std::move(handler));
          }
        },
        token, buffers);
  }

 private:
  boost::asio::ip::tcp::socket tcp_;
  std::optional<boost::asio::ssl::stream<boost::asio::ip::tcp::socket&>> tls_;
};

}  // namespace latch::client_internal
