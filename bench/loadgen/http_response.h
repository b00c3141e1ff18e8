#pragma once
// The client side of HTTP/1.1 for latch_httpload: one response at a time out of the bytes a
// keep-alive connection has received (Content-Length or chunked bodies; what the demo service
// sends). No allocation beyond the body's copy.
#include <cstddef>
#include <string>
#include <string_view>

namespace latch::bench {

struct HttpResponse {
  int status = 0;
  bool close = false;  // `Connection: close`: the server ends the connection after it
  std::string body;
};

// Parses one whole response at the front of `in`. Returns the bytes it took (> 0) with *out
// filled, 0 when more bytes are needed, -1 when the bytes are not an HTTP/1.x response or
// its framing is missing or malformed (the connection is then unusable).
std::ptrdiff_t ParseHttpResponse(std::string_view in, HttpResponse* out);

}  // namespace latch::bench
