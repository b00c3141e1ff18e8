#include "net/client_stream.h"

#include "net/tls_session.h"

namespace latch {

ClientStream::ClientStream(boost::asio::ip::tcp::socket socket, std::shared_ptr<TlsContext> tls)
    : socket_(std::move(socket)) {
  if (tls) tls_ = std::make_unique<TlsSession>(socket_, std::move(tls));
}

ClientStream::~ClientStream() = default;

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
