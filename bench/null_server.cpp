// null_server: the benchmark's ceiling. It reads RESP requests with the server's own
// protocol::RequestParser and answers each without a store, on one thread with plain epoll:
// GET -> $-1, PING -> +PONG, CONFIG -> *0 (redis-benchmark asks for CONFIG GET save),
// SCRIPT -> a 40-character SHA, commands that answer integers in the lock workloads
// (EVALSHA, DEL, DELEX, LOCK.*, INCR, DBSIZE) -> :1, anything else -> +OK.
// All replies of one read batch go out in one write, as latchd does.
// --engine uring (built with liburing): the same on one io_uring instead of epoll, as latchd's
// io-engine uring: a receive per client, its replies in one send, the next receive once the
// send is done, and one io_uring_enter per pass (it submits what the last pass queued and
// waits for the next completions; latchd's workers wait in epoll and submit apart, one more
// call per pass: this is the ceiling of the engine, not of latchd's integration of it).
//
//   null_server --port N [--bind 127.0.0.1] [--engine epoll|uring]
//
// Ends on SIGINT/SIGTERM. Not a server to use: no limits beyond the parser's own.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#if LATCH_HAVE_URING
#include <liburing.h>
#endif

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

#if LATCH_HAVE_URING
// user_data: the client, with the low bit set for a send (Client is aligned); null: the accept.
constexpr std::uintptr_t kSendBit = 1;

void QueueRecv(io_uring* ring, Client* c, char* buf, std::size_t size) {
  io_uring_sqe* sqe = io_uring_get_sqe(ring);
  if (sqe == nullptr) {
    io_uring_submit(ring);
    sqe = io_uring_get_sqe(ring);
  }
  io_uring_prep_recv(sqe, c->fd, buf, size, 0);
  io_uring_sqe_set_data(sqe, c);
}

void QueueSend(io_uring* ring, Client* c) {
  io_uring_sqe* sqe = io_uring_get_sqe(ring);
  if (sqe == nullptr) {
    io_uring_submit(ring);
    sqe = io_uring_get_sqe(ring);
  }
  io_uring_prep_send(sqe, c->fd, c->out.data(), c->out.size(), MSG_NOSIGNAL);
  sqe->user_data = reinterpret_cast<std::uintptr_t>(c) | kSendBit;
}

void QueueAccept(io_uring* ring, int lfd) {
  io_uring_sqe* sqe = io_uring_get_sqe(ring);
  io_uring_prep_accept(sqe, lfd, nullptr, nullptr, SOCK_CLOEXEC);
  io_uring_sqe_set_data(sqe, nullptr);
}

// Each client has its own receive buffer: its receive is in flight while others complete.
struct UringClient : Client {
  char buf[16 * 1024];
};

int RunUring(int lfd) {
  io_uring ring;
  io_uring_params p{};
  p.flags = IORING_SETUP_CQSIZE;
  p.cq_entries = 8192;
  if (int r = io_uring_queue_init_params(1024, &ring, &p); r < 0) {
    std::fprintf(stderr, "null_server: io_uring_queue_init: %s\n", std::strerror(-r));
    return 1;
  }
  std::unordered_map<int, std::unique_ptr<UringClient>> clients;
  QueueAccept(&ring, lfd);
  for (;;) {
    // One call per pass: what the last pass queued goes in, the next completions come out.
    if (int r = io_uring_submit_and_wait(&ring, 1); r < 0 && r != -EINTR) return 1;
    io_uring_cqe* cqe = nullptr;
    while (io_uring_peek_cqe(&ring, &cqe) == 0 && cqe != nullptr) {
      const std::uintptr_t data = cqe->user_data;
      const int res = cqe->res;
      io_uring_cqe_seen(&ring, cqe);
      if (data == 0) {
        if (res >= 0) {
          int one = 1;
          ::setsockopt(res, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
          auto c = std::make_unique<UringClient>();
          c->fd = res;
          QueueRecv(&ring, c.get(), c->buf, sizeof c->buf);
          clients.emplace(res, std::move(c));
        }
        QueueAccept(&ring, lfd);
        continue;
      }
      // A client has one operation in flight at a time: a receive, or the send of its replies
      // (a short send continues with the rest).
      auto* c = reinterpret_cast<UringClient*>(data & ~kSendBit);
      bool queued = false;
      if (res > 0 && (data & kSendBit) != 0) {
        c->out.erase(0, static_cast<std::size_t>(res));
        if (c->out.empty()) {
          QueueRecv(&ring, c, c->buf, sizeof c->buf);
        } else {
          QueueSend(&ring, c);
        }
        queued = true;
      } else if (res > 0) {
        c->in.append(c->buf, static_cast<std::size_t>(res));
        const bool ok = Process(c);
        if (!c->out.empty()) {
          QueueSend(&ring, c);
          queued = true;
        } else if (ok) {
          QueueRecv(&ring, c, c->buf, sizeof c->buf);
          queued = true;
        }
      }
      if (!queued) {  // closed by the peer, an error, or a protocol error with nothing to send
        const int fd = c->fd;
        ::close(fd);
        clients.erase(fd);
      }
    }
  }
}
#endif

}  // namespace

int main(int argc, char** argv) {
  int port = 0;
  const char* bind_addr = "127.0.0.1";
  const char* engine = "epoll";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--port") == 0) port = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--bind") == 0) bind_addr = argv[i + 1];
    if (std::strcmp(argv[i], "--engine") == 0) engine = argv[i + 1];
  }
  const bool uring = std::strcmp(engine, "uring") == 0;
  if (port <= 0 || (!uring && std::strcmp(engine, "epoll") != 0)) {
    std::fprintf(stderr, "usage: null_server --port N [--bind 127.0.0.1] [--engine epoll|uring]\n");
    return 2;
  }
  int lfd = Listen(bind_addr, port);
  if (lfd < 0) {
    std::fprintf(stderr, "null_server: cannot listen on %s:%d: %s\n", bind_addr, port,
                 std::strerror(errno));
    return 1;
  }
  if (uring) {
#if LATCH_HAVE_URING
    // Blocking accepts: io_uring polls the listener itself.
    ::fcntl(lfd, F_SETFL, ::fcntl(lfd, F_GETFL) & ~O_NONBLOCK);
    std::fprintf(stderr, "null_server listening on %s:%d (io_uring)\n", bind_addr, port);
    return RunUring(lfd);
#else
    std::fprintf(stderr, "null_server: built without liburing: no --engine uring\n");
    return 2;
#endif
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
