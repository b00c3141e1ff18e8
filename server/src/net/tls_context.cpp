// Builds the OpenSSL server context from the tls-* options, with Redis 7.0's checks in its
// order and its reasons, so an operator's redis.conf fails (or works) the same way.
#include "net/tls_context.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>

#include <optional>

#include "config/config_values.h"
#include "net/tls_session.h"

namespace latch {
namespace {

// The oldest error OpenSSL queued, as text; the queue is cleared for the next call.
std::string OpenSslError() {
  const unsigned long code = ERR_peek_error();
  char text[256] = "unknown error";
  if (code != 0) ERR_error_string_n(code, text, sizeof(text));
  ERR_clear_error();
  return text;
}

// tls-protocols as SSL_OP_NO_* bits for the versions left out; nullopt for an unknown name.
// Empty: TLSv1.2 and TLSv1.3, Redis's default.
std::optional<long> ProtocolOptions(const std::string& protocols) {
  constexpr long kAll = SSL_OP_NO_TLSv1 | SSL_OP_NO_TLSv1_1 | SSL_OP_NO_TLSv1_2 | SSL_OP_NO_TLSv1_3;
  if (protocols.empty()) return SSL_OP_NO_TLSv1 | SSL_OP_NO_TLSv1_1;
  long disabled = kAll;
  std::size_t i = 0;
  while (i < protocols.size()) {
    while (i < protocols.size() && protocols[i] == ' ') ++i;
    std::size_t end = protocols.find(' ', i);
    if (end == std::string::npos) end = protocols.size();
    const std::string_view word = std::string_view(protocols).substr(i, end - i);
    i = end;
    if (word.empty()) continue;
    if (config::EqualsIgnoreCase(word, "tlsv1"))
      disabled &= ~SSL_OP_NO_TLSv1;
    else if (config::EqualsIgnoreCase(word, "tlsv1.1"))
      disabled &= ~SSL_OP_NO_TLSv1_1;
    else if (config::EqualsIgnoreCase(word, "tlsv1.2"))
      disabled &= ~SSL_OP_NO_TLSv1_2;
    else if (config::EqualsIgnoreCase(word, "tlsv1.3"))
      disabled &= ~SSL_OP_NO_TLSv1_3;
    else
      return std::nullopt;
  }
  if (disabled == kAll) return std::nullopt;
  return disabled;
}

int VerifyMode(const std::string& auth_clients) {
  if (config::EqualsIgnoreCase(auth_clients, "no")) return SSL_VERIFY_NONE;
  if (config::EqualsIgnoreCase(auth_clients, "optional")) return SSL_VERIFY_PEER;
  return SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
}

void ConfigureSessionCache(SSL_CTX* ctx, const Options& o) {
  if (!o.tls_session_caching) {
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
    return;
  }
  static constexpr unsigned char kSessionIdContext[] = "latchd";
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_SERVER);
  SSL_CTX_sess_set_cache_size(ctx, o.tls_session_cache_size);
  SSL_CTX_set_timeout(ctx, o.tls_session_cache_timeout);
  SSL_CTX_set_session_id_context(ctx, kSessionIdContext, sizeof(kSessionIdContext) - 1);
}

// tls-dh-params-file: only for the DHE ciphers of TLSv1.2; without it OpenSSL picks
// parameters matching the certificate's strength.
std::optional<std::string> LoadDhParams(SSL_CTX* ctx, const std::string& file) {
  if (file.empty()) {
    SSL_CTX_set_dh_auto(ctx, 1);
    return std::nullopt;
  }
  BIO* bio = BIO_new_file(file.c_str(), "r");
  if (bio == nullptr) return "Failed to load " + file + ": " + OpenSslError();
  EVP_PKEY* params = PEM_read_bio_Parameters(bio, nullptr);
  BIO_free(bio);
  if (params == nullptr) return "Failed to load DH params file: " + file + ": " + OpenSslError();
  if (SSL_CTX_set0_tmp_dh_pkey(ctx, params) <= 0) {
    EVP_PKEY_free(params);
    return "Failed to load DH params file: " + file + ": " + OpenSslError();
  }
  return std::nullopt;
}

// The certificate, key, CA and ciphers; Redis's reason for the first one that fails.
std::optional<std::string> LoadMaterial(SSL_CTX* ctx, const Options& o) {
  if (SSL_CTX_use_certificate_chain_file(ctx, o.tls_cert_file.c_str()) <= 0) {
    return "Failed to load certificate: " + o.tls_cert_file + ": " + OpenSslError();
  }
  if (SSL_CTX_use_PrivateKey_file(ctx, o.tls_key_file.c_str(), SSL_FILETYPE_PEM) <= 0) {
    return "Failed to load private key: " + o.tls_key_file + ": " + OpenSslError();
  }
  if (!o.tls_ca_cert_file.empty() || !o.tls_ca_cert_dir.empty()) {
    const char* file = o.tls_ca_cert_file.empty() ? nullptr : o.tls_ca_cert_file.c_str();
    const char* dir = o.tls_ca_cert_dir.empty() ? nullptr : o.tls_ca_cert_dir.c_str();
    if (SSL_CTX_load_verify_locations(ctx, file, dir) <= 0) {
      return "Failed to configure CA certificate(s) file/directory: " + OpenSslError();
    }
  }
  if (auto reason = LoadDhParams(ctx, o.tls_dh_params_file)) return reason;
  if (!o.tls_ciphers.empty() && !SSL_CTX_set_cipher_list(ctx, o.tls_ciphers.c_str())) {
    return "Failed to configure ciphers: " + o.tls_ciphers;
  }
  if (!o.tls_ciphersuites.empty() && !SSL_CTX_set_ciphersuites(ctx, o.tls_ciphersuites.c_str())) {
    return "Failed to configure ciphersuites: " + o.tls_ciphersuites;
  }
  return std::nullopt;
}

}  // namespace

std::shared_ptr<TlsContext> BuildTlsContext(const Options& o, std::string* error) {
  ERR_clear_error();
  if (o.tls_cert_file.empty()) {
    *error = "No tls-cert-file configured!";
    return nullptr;
  }
  if (o.tls_key_file.empty()) {
    *error = "No tls-key-file configured!";
    return nullptr;
  }
  if (!config::EqualsIgnoreCase(o.tls_auth_clients, "no") && o.tls_ca_cert_file.empty() &&
      o.tls_ca_cert_dir.empty()) {
    *error =
        "Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-cluster, "
        "tls-replication or tls-auth-clients are enabled!";
    return nullptr;
  }
  const std::optional<long> protocols = ProtocolOptions(o.tls_protocols);
  if (!protocols) {
    *error =
        "Invalid tls-protocols specified. Use a combination of 'TLSv1', 'TLSv1.1', "
        "'TLSv1.2' and 'TLSv1.3'.";
    return nullptr;
  }
  boost::asio::ssl::context ssl(boost::asio::ssl::context::tls_server);
  SSL_CTX* ctx = ssl.native_handle();
  SSL_CTX_set_options(
      ctx, *protocols | SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION | SSL_OP_SINGLE_DH_USE);
  if (o.tls_prefer_server_ciphers) SSL_CTX_set_options(ctx, SSL_OP_CIPHER_SERVER_PREFERENCE);
  // Asio may retry a write with the buffer at another address (out_ grows between tries).
  SSL_CTX_set_mode(ctx, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_ENABLE_PARTIAL_WRITE);
  ConfigureSessionCache(ctx, o);
  const std::string pass = o.tls_key_file_pass;
  ssl.set_password_callback(
      [pass](std::size_t, boost::asio::ssl::context::password_purpose) { return pass; });
  if (auto reason = LoadMaterial(ctx, o)) {
    *error = std::move(*reason);
    return nullptr;
  }
  SSL_CTX_set_verify(ctx, VerifyMode(o.tls_auth_clients), nullptr);
  return std::make_shared<TlsContext>(std::move(ssl),
                                      std::chrono::milliseconds(o.tls_handshake_timeout));
}

TlsContextSlot::TlsContextSlot(std::shared_ptr<TlsContext> context)
    : context_(std::move(context)) {}

std::shared_ptr<TlsContext> TlsContextSlot::Current() const {
  std::lock_guard lock(mu_);
  return context_;
}

bool TlsContextSlot::Reload(const Options& o, std::string* error) {
  // Built outside the lock: reading files must not stall the acceptor taking Current().
  std::shared_ptr<TlsContext> fresh = BuildTlsContext(o, error);
  if (!fresh) return false;
  std::lock_guard lock(mu_);
  context_ = std::move(fresh);
  return true;
}

}  // namespace latch
