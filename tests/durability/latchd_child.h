#pragma once
// A latchd child process that a durability test kills and restarts on the same port and the
// same data directory, the way a crash and a supervisor would: kill -9, SIGSTOP/SIGCONT,
// restart. Every wait is bounded.
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace latch::test {

class LatchdChild {
 public:
  // `args` are directives (e.g. {"--appendonly", "yes"}); --port, --bind and --dir are added
  // (a fresh temporary directory, removed by the destructor).
  explicit LatchdChild(std::vector<std::string> args);
  ~LatchdChild();
  LatchdChild(const LatchdChild&) = delete;
  LatchdChild& operator=(const LatchdChild&) = delete;

  // Starts latchd and waits until it has loaded its journal (INFO: loading:0). False when it exited
  // or did not answer in time; exit_status() and Log() say why. The first start moves to
  // another port if its port was taken (port() then says which).
  bool Start(std::chrono::milliseconds timeout = std::chrono::seconds(20));
  // After a Start() that returned true: waits (bounded) until the child exits by itself, and
  // reaps it. False when it is still running then.
  bool WaitForExit(std::chrono::milliseconds timeout);
  // SIGKILL and reap: the crash.
  void Kill9();
  // SIGTERM and reap (bounded; then SIGKILL).
  void Stop();
  void Pause();   // SIGSTOP
  void Resume();  // SIGCONT
  bool running() const { return pid_ > 0; }
  // The directives of the next Start() (a restart with another configuration).
  void set_args(std::vector<std::string> args) { args_ = std::move(args); }
  // "NAME=value" entries added to the environment of the next Start()s (e.g. libfaketime's
  // LD_PRELOAD and FAKETIME: a restart under another wall clock).
  void set_env(std::vector<std::string> env) { env_ = std::move(env); }
  pid_t pid() const { return pid_; }
  // After Start() returned false because the child exited: its wait status.
  int exit_status() const { return exit_status_; }

  int port() const { return port_.load(); }  // any thread (a test's probe, during Start)
  const std::string& dir() const { return dir_; }
  // <dir>/appendonlydir: where the journal is with the default directives.
  std::string aof_dir() const { return dir_ + "/appendonlydir"; }
  std::string Log() const;  // everything every run wrote

 private:
  enum class Launch { kServing, kExited, kPortTaken, kTimedOut };
  Launch LaunchOnce(std::chrono::milliseconds timeout);
  void Reap(int signal);

  std::vector<std::string> args_;
  std::vector<std::string> env_;
  std::string dir_;
  std::string log_path_;
  std::atomic<int> port_{0};
  bool started_once_ = false;
  pid_t pid_ = -1;
  int exit_status_ = -1;
};

// Runs a shell command; returns its exit status and its output (stdout and stderr) in *out.
int RunCommand(const std::string& command, std::string* out);

// Waits (bounded: 5 s) until INFO persistence on `port` holds `field`.
bool WaitForInfo(int port, const std::string& field);

// latchd's arguments for a journal synced before each reply.
std::vector<std::string> AppendfsyncAlways();

// An integer reply (":123\r\n") as a fencing token or a number; anything else -> 0.
std::uint64_t IntegerReply(const std::string& reply);

}  // namespace latch::test
