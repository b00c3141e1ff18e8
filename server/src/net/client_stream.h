#pragma once
// The byte stream of a client connection: plain TCP, or TLS over the same socket. The plain
// case is the socket's own inline async call behind one predictable branch (no virtual call,
// no allocation, no OpenSSL header), so the plain path costs what it did before TLS existed;
// TLS calls go through a type-erased handler into net/client_stream.cpp, where the OpenSSL
// stream lives (one allocation per TLS read or write, small next to the encryption).
#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <memory>
#include <utility>

namespace latch {

class TlsContext;
struct TlsSession;

class ClientStream {
 public:
  using IoHandler =
      boost::asio::any_completion_handler<void(boost::system::error_code, std::size_t)>;
  using HandshakeHandler = boost::asio::any_completion_handler<void(boost::system::error_code)>;

  // `tls` null: plain TCP. The stream is not movable: the TLS layer refers to socket_.
  ClientStream(boost::asio::ip::tcp::socket socket, std::shared_ptr<TlsContext> tls);
  ~ClientStream();
  ClientStream(const ClientStream&) = delete;
  ClientStream& operator=(const ClientStream&) = delete;

  boost::asio::ip::tcp::socket& socket() { return socket_; }
  bool is_tls() const { return tls_ != nullptr; }
  // TLS only: the server side of the handshake, and the time it may take.
  void AsyncHandshake(HandshakeHandler handler);
  std::chrono::milliseconds handshake_timeout() const;

  template <class Handler>
  void AsyncReadSome(boost::asio::mutable_buffer buffer, Handler&& handler) {
    if (tls_ == nullptr) [[likely]] {
      socket_.async_read_some(buffer, std::forward<Handler>(handler));
      return;
    }
    TlsReadSome(buffer, IoHandler(std::forward<Handler>(handler)));
  }
  template <class Handler>
  void AsyncWriteSome(boost::asio::const_buffer buffer, Handler&& handler) {
    if (tls_ == nullptr) [[likely]] {
      socket_.async_write_some(buffer, std::forward<Handler>(handler));
      return;
    }
    TlsWriteSome(buffer, IoHandler(std::forward<Handler>(handler)));
  }

 private:
  void TlsReadSome(boost::asio::mutable_buffer buffer, IoHandler handler);
  void TlsWriteSome(boost::asio::const_buffer buffer, IoHandler handler);

  boost::asio::ip::tcp::socket socket_;
  std::unique_ptr<TlsSession> tls_;
};

}  // namespace latch
