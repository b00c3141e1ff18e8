#pragma once
// A blocking HTTP/1.1 client for tests of latchd's HTTP endpoints: writes raw request bytes
// and reads one response at a time (status, headers, a body framed by Content-Length, by
// chunked transfer coding or by the end of the connection), so a test sees
// exactly what the server wrote and can reuse the connection (keep-alive). Every wait is
// bounded by the timeout (poll-based). Plain POSIX sockets: no Asio, no Beast.
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace latch::test {

struct HttpResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // names in lower case
  std::string body;
  // The value of a header, "" when absent (name in any case).
  std::string header(std::string_view name) const;
};

class HttpConnection {
 public:
  explicit HttpConnection(int port, std::chrono::milliseconds timeout = std::chrono::seconds(5));
  ~HttpConnection();
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;

  bool connected() const { return fd_ >= 0; }
  const std::string& error() const { return error_; }

  bool Send(std::string_view bytes);
  // One response; nullopt (and error()) on timeout, end of stream or a malformed response.
  // `head`: the request was HEAD, so the response has no body whatever its Content-Length.
  std::optional<HttpResponse> Read(bool head = false);
  // True if the server closes the connection within the timeout.
  bool WaitClosed();

  // Sends `method target` with Host, Content-Length (when there is a body) and `headers`
  // ("Name: value" lines) and reads the response. On failure the status is 0 and the body
  // says why.
  HttpResponse Request(std::string_view method, std::string_view target, std::string_view body = {},
                       const std::vector<std::string>& headers = {});

 private:
  bool Fill(std::chrono::steady_clock::time_point deadline);
  // Reads a chunked body (RFC 9112 7.1) into *body.
  bool ReadChunked(std::chrono::steady_clock::time_point deadline, std::string* body);

  std::chrono::milliseconds timeout_;
  int fd_ = -1;
  std::string buffer_;
  std::string error_;
};

// A request as bytes: "METHOD target HTTP/1.1", Host, the headers, Content-Length (unless the
// headers give one), the body.
std::string HttpRequestBytes(std::string_view method, std::string_view target,
                             std::string_view body, const std::vector<std::string>& headers);

}  // namespace latch::test
