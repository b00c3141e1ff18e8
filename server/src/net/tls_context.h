#pragma once
// The TLS side of the tls-port listener: the OpenSSL context built from the tls-* options,
// and the slot new TLS connections take it from (CONFIG SET swaps it: connections already
// up keep the one they started with, as in Redis). No Asio or OpenSSL here: the context's
// type is complete only in net/tls_session.h.
#include <memory>
#include <mutex>
#include <string>

#include "latch/options.h"

namespace latch {

class TlsContext;

// Builds the server context from `o` (certificate, key, CA, protocols, ciphers, session
// cache, client-certificate policy). On failure returns null and sets *error to the reason,
// in Redis's words ("Failed to load certificate: server.crt: ...").
std::shared_ptr<TlsContext> BuildTlsContext(const Options& o, std::string* error);

class TlsContextSlot {
 public:
  explicit TlsContextSlot(std::shared_ptr<TlsContext> context);
  // The context a connection accepted now uses. Any thread.
  std::shared_ptr<TlsContext> Current() const;
  // Builds a new context from `o`, files read again (a renewed certificate under the same
  // name is picked up, as Redis does on any CONFIG SET tls-*). False (and *error set) when
  // the new settings do not load: the context in use stays.
  bool Reload(const Options& o, std::string* error);

 private:
  mutable std::mutex mu_;
  std::shared_ptr<TlsContext> context_;
};

}  // namespace latch
