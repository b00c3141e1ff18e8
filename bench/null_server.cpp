// null_server: the benchmark's ceiling. It reads RESP requests with the server's own
// protocol::RequestParser and answers each without a store, on one thread with plain epoll:
// GET -> $-1, PING -> +PONG, CONFIG -> *0 (redis-benchmark asks for CONFIG GET save),
// SCRIPT -> a 40-character SHA, commands that answer integers in the lock workloads
// (EVALSHA, DEL, DELEX, LOCK.*, INCR, DBSIZE) -> :1, anything else -> +OK.
// All replies of one read batch go out in one write, as latchd does.
//
//   null_server --port N [--bind 127.0.0.1]
//
// Ends on SIGINT/SIGTERM. Not a server to use: no limits beyond the parser's own.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "latch/protocol/request_parser.h"

namespace {

struct Client {
  int fd = -1;
  std::string in;   // unconsumed request bytes
  std::string out;  // replies not yet written
  bool want_out = false;  // registered for EPOLLOUT
  latch::protocol::RequestParser parser;
};

bool EqualsNoCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char c = a[i];
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    if (c != b[i]) return false;
  }
  return true;
}

void AppendReply(std::string_view cmd, std::string* out) {
  if (EqualsNoCase(cmd, "GET")) {
    out->append("$-1\r\n");
  } else if (EqualsNoCase(cmd, "PING")) {
    out->append("+PONG\r\n");
  } else if (EqualsNoCase(cmd, "CONFIG")) {
    out->append("*0\r\n");
  } else if (EqualsNoCase(cmd, "SCRIPT")) {
    out->append("$40\r\n0000000000000000000000000000000000000000\r\n");
  } else if (EqualsNoCase(cmd, "EVALSHA") || EqualsNoCase(cmd, "DEL") ||
             EqualsNoCase(cmd, "DELEX") || EqualsNoCase(cmd, "LOCK.ACQUIRE") ||
             EqualsNoCase(cmd, "LOCK.RELEASE") || EqualsNoCase(cmd, "INCR") ||
             EqualsNoCase(cmd, "DBSIZE")) {
    out->append(":1\r\n");
  } else {
    out->append("+OK\r\n");
  }
}

// Parses every complete request in c->in and queues its reply. Returns false when the
// connection must close (protocol error: the error reply is queued first).
bool Process(Client* c) {
  std::size_t off = 0;
  bool ok = true;
  for (;;) {
    std::string_view rest(c->in.data() + off, c->in.size() - off);
    if (rest.empty()) break;
    auto r = c->parser.Parse(rest);
    if (r == latch::protocol::RequestParser::Result::kNeedMore) break;
    if (r == latch::protocol::RequestParser::Result::kError) {
      c->out.append("-").append(c->parser.error()).append("\r\n");
      ok = false;
      break;
    }
    if (r == latch::protocol::RequestParser::Result::kCommand && !c->parser.args().empty()) {
      AppendReply(c->parser.args()[0], &c->out);
    }
    off += c->parser.consumed();
  }
  c->in.erase(0, off);
  return ok;
}

// Writes as much of c->out as the socket takes. Returns false on a write error.
bool Flush(Client* c) {
  std::size_t done = 0;
  while (done < c->out.size()) {
    ssize_t n = ::send(c->fd, c->out.data() + done, c->out.size() - done, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  c->out.erase(0, done);
  return true;
}

int Listen(const char* bind_addr, int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  if (::inet_pton(AF_INET, bind_addr, &addr.sin_addr) != 1) return -1;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return -1;
  if (::listen(fd, 511) != 0) return -1;
  return fd;
}

}  // namespace

int main(int argc, char** argv) {
  int port = 0;
  const char* bind_addr = "127.0.0.1";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--port") == 0) port = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--bind") == 0) bind_addr = argv[i + 1];
  }
  if (port <= 0) {
    std::fprintf(stderr, "usage: null_server --port N [--bind 127.0.0.1]\n");
    return 2;
  }
  int lfd = Listen(bind_addr, port);
  if (lfd < 0) {
    std::fprintf(stderr, "null_server: cannot listen on %s:%d: %s\n", bind_addr, port,
                 std::strerror(errno));
    return 1;
  }
  // SIGINT/SIGTERM keep their default action (terminate): there is no state to save.
  int ep = ::epoll_create1(EPOLL_CLOEXEC);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.ptr = nullptr;  // the listener
  ::epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
  std::unordered_map<int, std::unique_ptr<Client>> clients;
  std::fprintf(stderr, "null_server listening on %s:%d\n", bind_addr, port);

  epoll_event events[256];
  char buf[64 * 1024];
  for (;;) {  // runs until a signal terminates the process
    int n = ::epoll_wait(ep, events, 256, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      return 1;
    }
    for (int i = 0; i < n; ++i) {
      if (events[i].data.ptr == nullptr) {
        for (int accepted = 0; accepted < 1024; ++accepted) {
          int fd = ::accept4(lfd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
          if (fd < 0) break;
          int one = 1;
          ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
          auto c = std::make_unique<Client>();
          c->fd = fd;
          epoll_event cev{};
          cev.events = EPOLLIN;
          cev.data.ptr = c.get();
          ::epoll_ctl(ep, EPOLL_CTL_ADD, fd, &cev);
          clients.emplace(fd, std::move(c));
        }
        continue;
      }
      auto* c = static_cast<Client*>(events[i].data.ptr);
      bool keep = true;
      if (events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
        ssize_t r = ::recv(c->fd, buf, sizeof buf, 0);
        if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
          keep = false;
        } else if (r > 0) {
          c->in.append(buf, static_cast<std::size_t>(r));
          keep = Process(c);
        }
      }
      if (!c->out.empty() && !Flush(c)) keep = false;
      if (keep) {
        // Wait for writability only while replies are pending (a slow reader).
        const bool want_out = !c->out.empty();
        if (want_out != c->want_out) {
          c->want_out = want_out;
          epoll_event cev{};
          cev.events = EPOLLIN | (want_out ? static_cast<unsigned>(EPOLLOUT) : 0u);
          cev.data.ptr = c;
          ::epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &cev);
        }
      } else {
        int fd = c->fd;
        ::epoll_ctl(ep, EPOLL_CTL_DEL, fd, nullptr);
        ::close(fd);
        clients.erase(fd);
      }
    }
  }
  for (auto& [fd, c] : clients) ::close(fd);
  ::close(lfd);
  ::close(ep);
  return 0;
}
