#pragma once
// The byte stream of a client connection: plain TCP, TLS over the same socket, or plain TCP on
// the worker's io_uring (io-engine uring, net/uring_ring.h). The plain case is the socket's own
// inline async call behind one predictable branch (no virtual call, no allocation, no OpenSSL
// header), so the plain path costs what it did before TLS existed; TLS calls go through a
// type-erased handler into net/client_stream.cpp, where the OpenSSL stream lives (one
// allocation per TLS read or write, small next to the encryption). The uring case keeps
// AsyncReadSome/AsyncWriteSome's contract (one of each at a time, the handler runs later on the
// worker thread, a short write is write_some's n, a closed peer is eof) with the handler held
// in place by the stream's UringOp.
#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <chrono>
#include <memory>
#include <utility>

#include "net/uring_ring.h"

namespace latch {

class TlsContext;
struct TlsSession;

class ClientStream {
 public:
  using IoHandler =
      boost::asio::any_completion_handler<void(boost::system::error_code, std::size_t)>;
  using HandshakeHandler = boost::asio::any_completion_handler<void(boost::system::error_code)>;

  // `tls` null: plain TCP, on `ring` when one is given (then the descriptor leaves Asio's
  // reactor). The stream is not movable: the TLS layer refers to socket_, the ring to the ops.
  ClientStream(boost::asio::ip::tcp::socket socket, std::shared_ptr<TlsContext> tls,
               UringRing* ring = nullptr);
  ~ClientStream();
  ClientStream(const ClientStream&) = delete;
  ClientStream& operator=(const ClientStream&) = delete;

  bool is_tls() const { return tls_ != nullptr; }
  bool on_ring() const { return ring_ != nullptr; }
  int native_handle() { return ring_ != nullptr ? fd_ : socket_.native_handle(); }
  void SetNoDelay();
  boost::asio::ip::tcp::endpoint RemoteEndpoint(boost::system::error_code& ec);
  boost::asio::ip::tcp::endpoint LocalEndpoint(boost::system::error_code& ec);
  // Shuts the socket down both ways and closes it; pending operations end (with an error, or
  // a receive with eof). On the ring they are cancelled too, and the descriptor is closed once
  // none is in flight (at the latest by the destructor, which runs after their completions).
  void Close();
  // TLS only: the server side of the handshake, and the time it may take.
  void AsyncHandshake(HandshakeHandler handler);
  std::chrono::milliseconds handshake_timeout() const;

  template <class Handler>
  void AsyncReadSome(boost::asio::mutable_buffer buffer, Handler&& handler) {
    if (tls_ == nullptr) [[likely]] {
      if (ring_ == nullptr) [[likely]] {
        socket_.async_read_some(buffer, std::forward<Handler>(handler));
        return;
      }
      return RingIo(read_op_, buffer.data(), buffer.size(), std::forward<Handler>(handler));
    }
    TlsReadSome(buffer, IoHandler(std::forward<Handler>(handler)));
  }
  template <class Handler>
  void AsyncWriteSome(boost::asio::const_buffer buffer, Handler&& handler) {
    if (tls_ == nullptr) [[likely]] {
      if (ring_ == nullptr) [[likely]] {
        socket_.async_write_some(buffer, std::forward<Handler>(handler));
        return;
      }
      return RingIo(write_op_, const_cast<void*>(buffer.data()), buffer.size(),
                    std::forward<Handler>(handler));
    }
    TlsWriteSome(buffer, IoHandler(std::forward<Handler>(handler)));
  }

 private:
  void TlsReadSome(boost::asio::mutable_buffer buffer, IoHandler handler);
  void TlsWriteSome(boost::asio::const_buffer buffer, IoHandler handler);

  template <class Handler>
  void RingIo(UringOp& op, void* data, std::size_t size, Handler&& handler) {
    // As Asio: an empty buffer, or a closed stream, completes at once, through the queue.
    if (size == 0 || fd_ < 0 || closing_) {
      const boost::system::error_code ec =
          size == 0 ? boost::system::error_code() : boost::asio::error::bad_descriptor;
      boost::asio::post(ring_->context(), [h = std::forward<Handler>(handler), ec]() mutable {
        h(ec, std::size_t{0});
      });
      return;
    }
    op.Hold(std::forward<Handler>(handler));
    if (&op == &read_op_) {
      ring_->Recv(op, fd_, data, size);
    } else {
      ring_->Send(op, fd_, data, size);
    }
  }

  boost::asio::ip::tcp::socket socket_;
  std::unique_ptr<TlsSession> tls_;
  UringRing* ring_ = nullptr;  // the worker's; outlives every connection of the worker
  int fd_ = -1;                // on the ring: the descriptor, taken from socket_
  bool closing_ = false;
  UringOp read_op_;
  UringOp write_op_;
};

}  // namespace latch
