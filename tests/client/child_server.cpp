#include "child_server.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <thread>

namespace latch::test {
namespace {

int PickFreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  ::close(fd);
  return port;
}

// True when every thread of pid is in the stopped state (/proc/<pid>/task/<tid>/stat).
bool AllThreadsStopped(pid_t pid) {
  std::string dir = "/proc/" + std::to_string(pid) + "/task";
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return true;
  bool all = true;
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] == '.') continue;
    std::ifstream stat(dir + "/" + e->d_name + "/stat");
    std::string line;
    std::getline(stat, line);
    auto close = line.rfind(')');  // the command name may hold spaces: state follows ") "
    if (close == std::string::npos || close + 2 >= line.size()) continue;
    char state = line[close + 2];
    if (state != 'T' && state != 't') all = false;
  }
  ::closedir(d);
  return all;
}

}  // namespace

bool Pingable(int port, int timeout_ms) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = false;
  int rc = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  pollfd p{fd, POLLOUT, 0};
  if ((rc == 0 || errno == EINPROGRESS) && ::poll(&p, 1, timeout_ms) == 1) {
    int err = 0;
    socklen_t len = sizeof(err);
    ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err == 0 && ::send(fd, "PING\r\n", 6, MSG_NOSIGNAL) == 6) {
      p = {fd, POLLIN, 0};
      char buf[16] = {};
      if (::poll(&p, 1, timeout_ms) == 1 && ::recv(fd, buf, sizeof(buf) - 1, 0) > 0) {
        // A server with a password answers -NOAUTH: it is up all the same.
        ok = std::strncmp(buf, "+PONG", 5) == 0 || std::strncmp(buf, "-NOAUTH", 7) == 0;
      }
    }
  }
  ::close(fd);
  return ok;
}

ChildServer::ChildServer(Kind kind, std::vector<std::string> extra_args)
    : kind_(kind), extra_args_(std::move(extra_args)) {
  // Another process may take the port between the probe and the bind: try a few.
  for (int attempt = 0; attempt < 5 && pid_ <= 0; ++attempt) Start(PickFreePort());
}

ChildServer::~ChildServer() { Kill(); }

std::vector<std::string> ChildServer::Argv(int port) const {
  std::vector<std::string> argv;
  if (kind_ == Kind::kRedis) {
    argv = {"redis-server", "--port", std::to_string(port), "--bind", "127.0.0.1",
            "--save",       "",       "--appendonly",       "no"};
  } else {
#ifdef LATCHD_PATH
    argv = {LATCHD_PATH, "--port", std::to_string(port), "--bind", "127.0.0.1"};
#else
    argv = {"latchd", "--port", std::to_string(port), "--bind", "127.0.0.1"};
#endif
  }
  argv.insert(argv.end(), extra_args_.begin(), extra_args_.end());
  return argv;
}

bool ChildServer::Start(int port) {
  if (port == 0) {
    error_ = "no free port";
    return false;
  }
  auto args = Argv(port);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) {
    error_ = std::string("fork: ") + std::strerror(errno);
    return false;
  }
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    int null = ::open("/dev/null", O_RDWR);
    ::dup2(null, 1);
    ::dup2(null, 2);
    ::execvp(argv[0], argv.data());
    ::_exit(127);
  }
  pid_ = pid;
  port_ = port;
  // Up to 5 s for the first PING answer.
  for (int i = 0; i < 250; ++i) {
    if (Pingable(port, 100)) return true;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      error_ = args[0] + " exited during start-up (port taken or not installed?)";
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  error_ = args[0] + " did not answer PING within 5 s";
  Kill();
  return false;
}

void ChildServer::Kill() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  if (paused_) ::kill(pid_, SIGCONT);
  paused_ = false;
  ::waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

bool ChildServer::Restart() {
  Kill();
  // The port was just released by our own child: retry briefly while the kernel frees it.
  for (int attempt = 0; attempt < 10; ++attempt) {
    if (Start(port_)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

void ChildServer::Pause() {
  if (pid_ > 0 && !paused_) {
    ::kill(pid_, SIGSTOP);
    paused_ = true;
    // kill() returns before every thread has stopped; a multi-threaded server (latchd) could
    // still answer a request in between. Wait (bounded) until all its threads show 'T'.
    for (int i = 0; i < 200 && !AllThreadsStopped(pid_); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
}

void ChildServer::Resume() {
  if (pid_ > 0 && paused_) {
    ::kill(pid_, SIGCONT);
    paused_ = false;
  }
}

std::size_t UnreadBytesAtServer(int port) {
  // "sl local_address rem_address st tx_queue:rx_queue ...", addresses and queues in hex.
  std::ifstream in("/proc/net/tcp");
  std::string line;
  std::getline(in, line);  // the header
  char local[64] = {};
  unsigned state = 0, tx = 0, rx = 0, local_port = 0;
  std::size_t unread = 0;
  while (std::getline(in, line)) {
    if (std::sscanf(line.c_str(), " %*u: %63s %*s %x %x:%x", local, &state, &tx, &rx) != 4)
      continue;
    const char* colon = std::strchr(local, ':');
    if (colon == nullptr || std::sscanf(colon + 1, "%x", &local_port) != 1) continue;
    constexpr unsigned kEstablished = 1;
    if (state == kEstablished && local_port == static_cast<unsigned>(port)) unread += rx;
  }
  return unread;
}

}  // namespace latch::test
