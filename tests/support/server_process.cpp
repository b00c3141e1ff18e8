#include "support/server_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
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
using SteadyClock = std::chrono::steady_clock;

constexpr int kStartAttempts = 3;
// Generous: a Debug or sanitizer build of latchd on a loaded 2-core CI machine.
constexpr milliseconds kReadyTimeout{15000};
constexpr milliseconds kStopTimeout{5000};
constexpr milliseconds kPollInterval{10};

std::string Tail(const std::string& text, std::size_t max) {
  return text.size() <= max ? text : "..." + text.substr(text.size() - max);
}

bool LooksLikePortTaken(const std::string& log) {
  return log.find("in use") != std::string::npos ||
         log.find("Address already") != std::string::npos;
}

}  // namespace

bool ServerProcess::OpenLog() {
  char path[] = "/tmp/latch-test-server-XXXXXX";
  int fd = ::mkstemp(path);
  if (fd < 0) {
    error_ = "cannot create a log file for " + name_;
    return false;
  }
  ::close(fd);
  log_path_ = path;
  return true;
}

ServerProcess::ServerProcess(std::string name, std::vector<std::string> argv, int port)
    : name_(std::move(name)) {
  if (!OpenLog()) return;
  if (StartOnce(argv, port) == StartResult::kReady) {
    port_ = port;
    return;
  }
  if (error_.empty()) error_ = name_ + ": port " + std::to_string(port) + " is taken";
}

ServerProcess::ServerProcess(std::string name, ArgvForPort argv_for_port) : name_(std::move(name)) {
  if (!OpenLog()) return;
  for (int attempt = 0; attempt < kStartAttempts; ++attempt) {
    int port = FreePort();
    if (port == 0) {
      error_ = "no free port on 127.0.0.1";
      return;
    }
    StartResult result = StartOnce(argv_for_port(port), port);
    if (result == StartResult::kReady) {
      port_ = port;
      error_.clear();
      return;
    }
    if (result == StartResult::kFailed) return;
  }
}

ServerProcess::~ServerProcess() {
  Stop();
  if (!log_path_.empty()) ::unlink(log_path_.c_str());
}

std::string ServerProcess::Log() const {
  std::ifstream in(log_path_);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

ServerProcess::StartResult ServerProcess::StartOnce(const std::vector<std::string>& argv,
                                                    int port) {
  std::vector<char*> cargv;
  for (const std::string& arg : argv) cargv.push_back(const_cast<char*>(arg.c_str()));
  cargv.push_back(nullptr);
  const pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) {
    error_ = "fork failed";
    return StartResult::kFailed;
  }
  if (pid == 0) {
    // Child: die with the test process, log to the file, exec. Only async-signal-safe calls.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    int log = ::open(log_path_.c_str(), O_WRONLY | O_APPEND);
    int null_in = ::open("/dev/null", O_RDONLY);
    if (log >= 0) {
      ::dup2(log, STDOUT_FILENO);
      ::dup2(log, STDERR_FILENO);
    }
    if (null_in >= 0) ::dup2(null_in, STDIN_FILENO);
    ::execvp(cargv[0], cargv.data());
    static const char kMessage[] = "exec failed: program not found or not executable\n";
    ssize_t ignored = ::write(STDERR_FILENO, kMessage, sizeof(kMessage) - 1);
    (void)ignored;
    ::_exit(127);
  }
  pid_ = pid;
  exit_status_ = -1;

  const auto deadline = SteadyClock::now() + kReadyTimeout;
  while (SteadyClock::now() < deadline) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      std::string log = Log();
      if (LooksLikePortTaken(log)) return StartResult::kPortTaken;
      error_ = name_ + " (" + argv[0] + ") exited during start-up with status " +
               std::to_string(status) + "; log:\n" + Tail(log, 2000);
      return StartResult::kFailed;
    }
    // Ours only: another process may hold the port (then ours fails to bind and exits, and
    // the constructor retries on another port).
    if (!ListensOn(pid_, port)) {
      std::this_thread::sleep_for(kPollInterval);
      continue;
    }
    RawConnection probe(milliseconds(1000));
    // Any reply means the server is serving (with requirepass it is a NOAUTH error).
    if (probe.Connect(port) && probe.Send(RawConnection::Encode({"PING"})) &&
        probe.ReadReply().has_value()) {
      return StartResult::kReady;
    }
    std::this_thread::sleep_for(kPollInterval);
  }
  Reap(SIGKILL);
  error_ = name_ + " did not answer PING on port " + std::to_string(port) + " within " +
           std::to_string(kReadyTimeout.count()) + " ms; log:\n" + Tail(Log(), 2000);
  return StartResult::kFailed;
}

int ServerProcess::Reap(int signal) {
  if (pid_ <= 0) return exit_status_;
  ::kill(pid_, signal);
  const auto deadline = SteadyClock::now() + kStopTimeout;
  int status = 0;
  while (SteadyClock::now() < deadline) {
    pid_t done = ::waitpid(pid_, &status, WNOHANG);
    if (done == pid_) {
      pid_ = -1;
      exit_status_ = status;
      return exit_status_;
    }
    if (done < 0 && errno != EINTR) {  // not our child any more: nothing to reap
      pid_ = -1;
      exit_status_ = -1;
      return exit_status_;
    }
    std::this_thread::sleep_for(kPollInterval);
  }
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
  exit_status_ = -1;
  return exit_status_;
}

int ServerProcess::Stop() { return Reap(SIGTERM); }

RedisServerProcess::RedisServerProcess(std::vector<std::string> extra_args)
    : ServerProcess("redis-server", [extra_args](int port) {
        std::vector<std::string> argv = {
            "redis-server", "--port", std::to_string(port), "--bind", "127.0.0.1", "--save", "",
            "--appendonly", "no",     "--daemonize",        "no"};
        argv.insert(argv.end(), extra_args.begin(), extra_args.end());
        return argv;
      }) {}

LatchdProcess::LatchdProcess(std::vector<std::string> extra_args, std::string config_file)
    : ServerProcess("latchd", [extra_args, config_file](int port) {
        std::vector<std::string> argv = {LATCHD_PATH};
        if (!config_file.empty()) argv.push_back(config_file);
        argv.insert(argv.end(), {"--port", std::to_string(port), "--bind", "127.0.0.1"});
        const std::vector<std::string> engine = TestIoEngineArgs();  // before: a test's wins
        argv.insert(argv.end(), engine.begin(), engine.end());
        argv.insert(argv.end(), extra_args.begin(), extra_args.end());
        return argv;
      }) {}

}  // namespace latch::test
