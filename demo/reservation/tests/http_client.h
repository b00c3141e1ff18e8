#pragma once
// A blocking HTTP/1.1 client over a raw socket, for tests: one request per connection
// (Connection: close), every read and write bounded by a timeout.
#include <string>
#include <utility>
#include <vector>

namespace latch::demo::test {

struct HttpReply {
  int status = 0;                                            // 0: no HTTP reply (see error)
  std::string error;                                         // transport failure
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
  std::string body;

  std::string header(const std::string& lower_name) const;
};

using Headers = std::vector<std::pair<std::string, std::string>>;

HttpReply HttpCall(int port, const std::string& method, const std::string& target,
                   const std::string& body = "", const Headers& headers = {});
// A loopback TCP connection to `port` with read and write timeouts; -1 on failure, with the
// reason in *error.
int ConnectLoopback(int port, int timeout_seconds, std::string* error);
// Sends `raw` bytes as they are and parses whatever comes back (malformed-request tests).
HttpReply HttpRaw(int port, const std::string& raw);

}  // namespace latch::demo::test
