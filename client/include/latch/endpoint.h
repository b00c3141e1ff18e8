#pragma once
// Where a client connects, parsed from the URLs Redis users write:
//   redis://[[user]:password@]host[:port][/db]     rediss://... for TLS
// e.g. redis://127.0.0.1:6380, redis://:secret@cache:6379/2, redis://app:pw@[::1]:6379,
// rediss://locks.internal:6390 (certificates: ClientOptions::tls).
// User and password may be percent-encoded. The default port is 6379 (Redis's), so the same
// URL style works for Redis and latchd alike.
#include <string>
#include <string_view>

#include "latch/result.h"

namespace latch {

struct Endpoint {
  std::string host = "127.0.0.1";
  int port = 6379;
  std::string user;      // empty: AUTH <password> (the "default" user)
  std::string password;  // empty: no AUTH
  int db = 0;
  bool tls = false;      // rediss://

  static Result<Endpoint> Parse(std::string_view url);
  // Back to a URL, with the password masked (for logs).
  std::string ToString() const;
};

}  // namespace latch
