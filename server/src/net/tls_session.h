#pragma once
// OpenSSL through Asio's ssl::stream, for the TLS connections of the tls-port listener.
// Included only by net/tls_*.cpp and net/client_stream.cpp: the ssl headers stay there.
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <chrono>
#include <memory>

namespace latch {

class TlsContext {
 public:
  TlsContext(boost::asio::ssl::context ssl, std::chrono::milliseconds handshake_timeout)
      : ssl(std::move(ssl)), handshake_timeout(handshake_timeout) {}
  boost::asio::ssl::context ssl;
  std::chrono::milliseconds handshake_timeout;  // tls-handshake-timeout when it was built
};

// The TLS layer over a connection's socket, which the owner keeps alive and in place.
struct TlsSession {
  TlsSession(boost::asio::ip::tcp::socket& socket, std::shared_ptr<TlsContext> ctx)
      : context(std::move(ctx)), stream(socket, context->ssl) {}
  std::shared_ptr<TlsContext> context;  // kept for the session's whole life
  boost::asio::ssl::stream<boost::asio::ip::tcp::socket&> stream;
};

}  // namespace latch
