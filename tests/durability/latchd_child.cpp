#include "durability/latchd_child.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "support/free_port.h"
#include "support/io_engine.h"
#include "support/port_owner.h"
#include "support/raw_connection.h"

namespace latch::test {
namespace {
using std::chrono::milliseconds;
constexpr milliseconds kPoll{10};
}  // namespace

LatchdChild::LatchdChild(std::vector<std::string> args) : args_(std::move(args)) {
  char dir[] = "/tmp/latch-durable-XXXXXX";
  if (::mkdtemp(dir) != nullptr) dir_ = dir;
  log_path_ = dir_ + "/latchd.log";
  port_ = FreePort();
}

LatchdChild::~LatchdChild() {
  if (pid_ > 0) Reap(SIGKILL);
  std::error_code ec;
  if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
}

bool LatchdChild::Start(milliseconds timeout) {
  // The first start may find the port it picked taken since (another test's server, restarted
  // on its own port): another port then, a few times. A restart keeps its port (its clients
  // come back to it).
  for (int attempt = 1;; ++attempt) {
    const Launch result = LaunchOnce(timeout);
    if (result == Launch::kServing) started_once_ = true;
    if (result != Launch::kPortTaken || started_once_ || attempt == 5) {
      return result == Launch::kServing;
    }
    port_ = FreePort();
  }
}

LatchdChild::Launch LatchdChild::LaunchOnce(milliseconds timeout) {
  std::vector<std::string> argv = {LATCHD_PATH, "--port",       std::to_string(port_),
                                   "--bind",    "127.0.0.1",    "--dir",
                                   dir_,        "--io-threads", "2"};
  const std::vector<std::string> engine = TestIoEngineArgs();
  argv.insert(argv.end(), engine.begin(), engine.end());
  argv.insert(argv.end(), args_.begin(), args_.end());
  // Built before fork(): the child only calls async-signal-safe functions.
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
  env.insert(env.end(), env_.begin(), env_.end());
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  const std::size_t log_start = Log().size();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    // A write past RLIMIT_FSIZE then fails with EFBIG instead of killing latchd (the
    // disk-full tests lower that limit when they cannot mount a small tmpfs).
    ::signal(SIGXFSZ, SIG_IGN);
    const int fd = ::open(log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
    }
    std::vector<char*> c;
    for (auto& a : argv) c.push_back(a.data());
    c.push_back(nullptr);
    ::execve(c[0], c.data(), envp.data());
    ::_exit(127);
  }
  pid_ = pid;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      exit_status_ = status;
      const std::string log = Log();
      const bool taken = log.size() > log_start &&
                         log.find("Address already in use", log_start) != std::string::npos;
      return taken ? Launch::kPortTaken : Launch::kExited;
    }
    // Only once this child listens: until then, an answer on the port is another process's.
    // PING answers while the journal loads (as in Redis); INFO says when it is done.
    RawConnection c(milliseconds(1000));
    if (ListensOn(pid_, port_) && c.Connect(port_) &&
        c.Command("INFO", "persistence").find("\r\nloading:0\r\n") != std::string::npos) {
      return Launch::kServing;
    }
    std::this_thread::sleep_for(kPoll);
  }
  return Launch::kTimedOut;
}

void LatchdChild::Reap(int signal) {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGCONT);  // a stopped child would never handle SIGTERM
  ::kill(pid_, signal);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  int status = 0;
  while (::waitpid(pid_, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status, 0);
      break;
    }
    std::this_thread::sleep_for(milliseconds(2));
  }
  exit_status_ = status;
  pid_ = -1;
}

bool LatchdChild::WaitForExit(milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (pid_ > 0 && std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      exit_status_ = status;
      pid_ = -1;
      return true;
    }
    std::this_thread::sleep_for(kPoll);
  }
  return pid_ <= 0;
}

void LatchdChild::Kill9() { Reap(SIGKILL); }
void LatchdChild::Stop() { Reap(SIGTERM); }
void LatchdChild::Pause() {
  if (pid_ > 0) ::kill(pid_, SIGSTOP);
}
void LatchdChild::Resume() {
  if (pid_ > 0) ::kill(pid_, SIGCONT);
}

std::string LatchdChild::Log() const {
  std::ifstream in(log_path_);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool WaitForInfo(int port, const std::string& field) {
  for (int i = 0; i < 250; ++i) {
    RawConnection c(port);
    if (c.Command("INFO", "persistence").find(field) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

int RunCommand(const std::string& command, std::string* out) {
  FILE* p = ::popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return -1;
  char buf[4096];
  std::size_t n;
  out->clear();
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out->append(buf, n);
  return ::pclose(p);
}

std::vector<std::string> AppendfsyncAlways() {
  return {"--appendonly", "yes", "--appendfsync", "always"};
}

std::uint64_t IntegerReply(const std::string& reply) {
  if (reply.size() < 4 || reply[0] != ':') return 0;
  return std::stoull(reply.substr(1));
}

}  // namespace latch::test
