// The TLS side of a client connection (rediss://): the context from ClientOptions::tls and the
// client handshake with SNI and host name verification.
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "connection.h"

namespace latch::client_internal {
namespace asio = boost::asio;

asio::ssl::context* Connection::TlsContext(std::string* error) {
  if (tls_context_) return tls_context_.get();
  const TlsOptions& o = options_.tls;
  auto context = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_client);
  boost::system::error_code ec;
  if (o.ca_file.empty()) {
    context->set_default_verify_paths(ec);
  } else {
    context->load_verify_file(o.ca_file, ec);
  }
  if (ec) {
    *error = "CA file '" + o.ca_file + "': " + ec.message();
    return nullptr;
  }
  if (!o.cert_file.empty()) {
    context->use_certificate_chain_file(o.cert_file, ec);
    if (!ec) context->use_private_key_file(o.key_file, asio::ssl::context::pem, ec);
    if (ec) {
      *error = "client certificate '" + o.cert_file + "': " + ec.message();
      return nullptr;
    }
  }
  tls_context_ = std::move(context);
  return tls_context_.get();
}

asio::awaitable<std::optional<std::string>> Connection::Handshake(Socket& socket) {
  auto& tls = *socket.tls();
  const TlsOptions& o = options_.tls;
  const std::string& name = o.server_name.empty() ? endpoint_.host : o.server_name;
  boost::system::error_code ec;
  // SNI carries a host name only; an address is checked against the certificate's IP names.
  asio::ip::make_address(name, ec);
  if (ec) SSL_set_tlsext_host_name(tls.native_handle(), name.c_str());
  tls.set_verify_mode(o.verify ? asio::ssl::verify_peer : asio::ssl::verify_none);
  if (o.verify) tls.set_verify_callback(asio::ssl::host_name_verification(name));
  auto [hec] = co_await tls.async_handshake(asio::ssl::stream_base::client,
                                            asio::as_tuple(asio::use_awaitable));
  if (hec) co_return "TLS handshake: " + hec.message();
  co_return std::nullopt;
}

}  // namespace latch::client_internal
