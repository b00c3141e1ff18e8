#pragma once
// Servers that a test runs as child processes on a free loopback port: a real redis-server
// (the reference for differential tests) and the latchd binary. Each instance starts in its
// constructor, waits (bounded) until PING answers, and is killed and reaped by its
// destructor; the child also dies with the test process (PR_SET_PDEATHSIG).
//
//   latch::test::RedisServerProcess redis;
//   ASSERT_TRUE(redis.ok()) << redis.error();
//   latch::test::RawConnection conn(redis.port());
#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

namespace latch::test {

class ServerProcess {
 public:
  // Builds the command line (argv[0] first) for a given port.
  using ArgvForPort = std::function<std::vector<std::string>(int port)>;

  // Starts the server on a free port and waits until it answers PING (any reply). If the port was
  // taken in the meantime the start is retried on another port (a bounded number of times).
  ServerProcess(std::string name, ArgvForPort argv_for_port);
  // Starts `argv` once, for a server that must listen on `port`, chosen in advance (cluster
  // nodes name each other's ports in their configuration): no retry on another port.
  ServerProcess(std::string name, std::vector<std::string> argv, int port);
  ~ServerProcess();
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  // True when the server answered PING; otherwise error() says why (with its log's tail).
  bool ok() const { return port_ != 0; }
  const std::string& error() const { return error_; }
  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  // Everything the server has written to stdout/stderr so far.
  std::string Log() const;
  // Sends SIGTERM and waits (bounded) for the exit. Returns the wait status as waitpid
  // reports it, or -1 when the server had to be killed with SIGKILL. Idempotent.
  int Stop();
  // Waits (bounded) for the server to exit by itself, e.g. after SHUTDOWN, without
  // signalling it; like Stop(), returns the wait status or -1 if it had to be killed.
  int WaitExit() { return Reap(0); }

 private:
  enum class StartResult { kReady, kPortTaken, kFailed };
  bool OpenLog();
  StartResult StartOnce(const std::vector<std::string>& argv, int port);
  // Kills the child if it is still running and reaps it; returns the wait status or -1.
  int Reap(int signal);

  std::string name_;
  std::string log_path_;
  pid_t pid_ = -1;
  int exit_status_ = -1;
  int port_ = 0;
  std::string error_;
};

// redis-server --port <free> --bind 127.0.0.1 --save '' --appendonly no, plus `extra_args`
// (e.g. {"--requirepass", "secret"}). Not installed is a failure, not a skip: CI installs it
// (scripts/deps.sh).
class RedisServerProcess : public ServerProcess {
 public:
  explicit RedisServerProcess(std::vector<std::string> extra_args = {});
};

// The latchd binary of this tree (LATCHD_PATH): latchd [config_file] --port <free>
// --bind 127.0.0.1 [extra_args...]; later directives override earlier ones, as in Redis.
class LatchdProcess : public ServerProcess {
 public:
  explicit LatchdProcess(std::vector<std::string> extra_args = {}, std::string config_file = "");
};

}  // namespace latch::test
