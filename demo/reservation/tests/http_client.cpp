#include "http_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

namespace latch::demo::test {
namespace {

constexpr int kTimeoutSeconds = 20;

std::string Lower(std::string s) {
  for (char& c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return s;
}

HttpReply Parse(const std::string& raw) {
  HttpReply reply;
  std::size_t head_end = raw.find("\r\n\r\n");
  if (raw.compare(0, 9, "HTTP/1.1 ") != 0 || head_end == std::string::npos) {
    reply.error = "not an HTTP response: [" + raw.substr(0, 200) + "]";
    return reply;
  }
  reply.status = std::atoi(raw.c_str() + 9);
  std::size_t pos = raw.find("\r\n") + 2;
  while (pos < head_end) {
    std::size_t eol = raw.find("\r\n", pos);
    std::string line = raw.substr(pos, eol - pos);
    std::size_t colon = line.find(':');
    if (colon != std::string::npos) {
      std::size_t v = line.find_first_not_of(' ', colon + 1);
      reply.headers.emplace_back(Lower(line.substr(0, colon)),
                                 v == std::string::npos ? "" : line.substr(v));
    }
    pos = eol + 2;
  }
  reply.body = raw.substr(head_end + 4);
  std::string length = reply.header("content-length");
  if (!length.empty() && reply.body.size() != std::strtoull(length.c_str(), nullptr, 10)) {
    reply.error =
        "body length " + std::to_string(reply.body.size()) + " != Content-Length " + length;
  }
  return reply;
}

}  // namespace

std::string HttpReply::header(const std::string& lower_name) const {
  for (const auto& [name, value] : headers) {
    if (name == lower_name) return value;
  }
  return "";
}

int ConnectLoopback(int port, int timeout_seconds, std::string* error) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *error = "socket failed";
    return -1;
  }
  timeval tv{timeout_seconds, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    *error = "connect failed: errno " + std::to_string(errno);
    ::close(fd);
    return -1;
  }
  return fd;
}

HttpReply HttpRaw(int port, const std::string& raw) {
  HttpReply failed;
  int fd = ConnectLoopback(port, kTimeoutSeconds, &failed.error);
  if (fd < 0) return failed;
  std::size_t sent = 0;
  while (sent < raw.size()) {
    ssize_t n = ::send(fd, raw.data() + sent, raw.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;  // the server may answer (413) and close before reading it all
    sent += static_cast<std::size_t>(n);
  }
  ::shutdown(fd, SHUT_WR);
  std::string response;
  char buf[16384];
  for (;;) {
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n > 0) {
      response.append(buf, static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && response.empty()) {
      failed.error = "recv failed: errno " + std::to_string(errno);
      ::close(fd);
      return failed;
    }
    break;
  }
  ::close(fd);
  return Parse(response);
}

HttpReply HttpCall(int port, const std::string& method, const std::string& target,
                   const std::string& body, const Headers& headers) {
  std::string raw = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n";
  if (!body.empty() || method == "POST") {
    raw +=
        "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
  }
  for (const auto& [name, value] : headers) raw += name + ": " + value + "\r\n";
  raw += "\r\n" + body;
  return HttpRaw(port, raw);
}

}  // namespace latch::demo::test
