#include "support/http_connection.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>

namespace latch::test {

using Clock = std::chrono::steady_clock;

namespace {
std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}
int RemainingMs(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return left.count() > 0 ? static_cast<int>(left.count()) : 0;
}
}  // namespace

std::string HttpResponse::header(std::string_view name) const {
  auto it = headers.find(Lower(name));
  return it == headers.end() ? std::string() : it->second;
}

HttpConnection::HttpConnection(int port, std::chrono::milliseconds timeout) : timeout_(timeout) {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) {
    error_ = std::string("socket: ") + std::strerror(errno);
    return;
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    error_ = "connect to port " + std::to_string(port) + ": " + std::strerror(errno);
    ::close(fd_);
    fd_ = -1;
  }
}

HttpConnection::~HttpConnection() {
  if (fd_ >= 0) ::close(fd_);
}

bool HttpConnection::Send(std::string_view bytes) {
  const auto deadline = Clock::now() + timeout_;
  while (!bytes.empty()) {
    pollfd p{fd_, POLLOUT, 0};
    if (::poll(&p, 1, RemainingMs(deadline)) <= 0) {
      error_ = "send timed out";
      return false;
    }
    const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n <= 0) {
      error_ = std::string("send: ") + std::strerror(errno);
      return false;
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

bool HttpConnection::Fill(Clock::time_point deadline) {
  pollfd p{fd_, POLLIN, 0};
  if (::poll(&p, 1, RemainingMs(deadline)) <= 0) {
    error_ = "timed out waiting for the server";
    return false;
  }
  char chunk[16384];
  const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
  if (n <= 0) {
    error_ = n == 0 ? "connection closed by the server" : std::strerror(errno);
    return false;
  }
  buffer_.append(chunk, static_cast<std::size_t>(n));
  return true;
}

std::optional<HttpResponse> HttpConnection::Read(bool head) {
  const auto deadline = Clock::now() + timeout_;
  std::size_t end;
  while ((end = buffer_.find("\r\n\r\n")) == std::string::npos) {
    if (!Fill(deadline)) return std::nullopt;
  }
  HttpResponse r;
  const std::string head_text = buffer_.substr(0, end);
  std::size_t line_end = head_text.find("\r\n");
  const std::string status_line = head_text.substr(0, line_end);
  if (status_line.rfind("HTTP/1.", 0) != 0 || status_line.size() < 12) {
    error_ = "malformed status line: " + status_line;
    return std::nullopt;
  }
  r.status = std::stoi(status_line.substr(9, 3));
  while (line_end != std::string::npos) {
    const std::size_t start = line_end + 2;
    line_end = head_text.find("\r\n", start);
    const std::string line = head_text.substr(start, line_end - start);
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::size_t v = colon + 1;
    while (v < line.size() && line[v] == ' ') ++v;
    r.headers[Lower(line.substr(0, colon))] = line.substr(v);
  }
  buffer_.erase(0, end + 4);
  if (head || r.status == 100) return r;
  if (Lower(r.header("transfer-encoding")) == "chunked") {
    if (!ReadChunked(deadline, &r.body)) return std::nullopt;
    return r;
  }
  if (r.headers.count("content-length") == 0) {  // the body ends with the connection
    while (Fill(deadline)) {
    }
    if (error_ != "connection closed by the server") return std::nullopt;
    r.body = std::move(buffer_);
    buffer_.clear();
    return r;
  }
  const std::size_t length = std::stoul(r.header("content-length"));
  while (buffer_.size() < length) {
    if (!Fill(deadline)) return std::nullopt;
  }
  r.body = buffer_.substr(0, length);
  buffer_.erase(0, length);
  return r;
}

bool HttpConnection::ReadChunked(Clock::time_point deadline, std::string* body) {
  for (;;) {
    std::size_t eol;
    while ((eol = buffer_.find("\r\n")) == std::string::npos) {
      if (!Fill(deadline)) return false;
    }
    std::size_t size = 0;
    try {
      size = std::stoul(buffer_.substr(0, eol), nullptr, 16);
    } catch (const std::exception&) {
      error_ = "malformed chunk size: " + buffer_.substr(0, eol);
      return false;
    }
    buffer_.erase(0, eol + 2);
    if (size == 0) break;
    while (buffer_.size() < size + 2) {
      if (!Fill(deadline)) return false;
    }
    if (buffer_.compare(size, 2, "\r\n") != 0) {
      error_ = "chunk not followed by CRLF";
      return false;
    }
    body->append(buffer_, 0, size);
    buffer_.erase(0, size + 2);
  }
  // Trailer fields (none expected), then the empty line.
  std::size_t eol;
  while ((eol = buffer_.find("\r\n")) != 0) {
    if (eol == std::string::npos) {
      if (!Fill(deadline)) return false;
      continue;
    }
    buffer_.erase(0, eol + 2);
  }
  buffer_.erase(0, 2);
  return true;
}

bool HttpConnection::WaitClosed() {
  const auto deadline = Clock::now() + timeout_;
  for (;;) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, RemainingMs(deadline)) <= 0) return false;
    char chunk[4096];
    const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n <= 0) return true;
  }
}

std::string HttpRequestBytes(std::string_view method, std::string_view target,
                             std::string_view body, const std::vector<std::string>& headers) {
  std::string out;
  out.append(method).append(" ").append(target).append(" HTTP/1.1\r\nHost: test\r\n");
  bool has_length = false;
  for (const std::string& h : headers) {
    out.append(h).append("\r\n");
    if (h.size() >= 15 && strncasecmp(h.c_str(), "content-length:", 15) == 0) has_length = true;
  }
  if (!has_length && (!body.empty() || method == "POST" || method == "PUT")) {
    out.append("Content-Length: ").append(std::to_string(body.size())).append("\r\n");
  }
  out.append("\r\n").append(body);
  return out;
}

HttpResponse HttpConnection::Request(std::string_view method, std::string_view target,
                                     std::string_view body,
                                     const std::vector<std::string>& headers) {
  HttpResponse failed;
  if (!connected()) {
    failed.body = "<no connection: " + error_ + ">";
    return failed;
  }
  if (!Send(HttpRequestBytes(method, target, body, headers))) {
    failed.body = "<send failed: " + error_ + ">";
    return failed;
  }
  std::optional<HttpResponse> r = Read(method == "HEAD");
  if (!r) {
    failed.body = "<no response: " + error_ + ">";
    return failed;
  }
  return *r;
}

}  // namespace latch::test
