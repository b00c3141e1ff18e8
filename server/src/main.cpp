// latchd: a thin wrapper around latch::Server, invoked like redis-server:
//
//   latchd [config-file] [--directive value ...]
//
// Start-up order, as redis-server's: configuration; daemonize (not when supervised); chdir to
// `dir`; the log; the pid file; listen; tell the supervisor READY=1. SIGINT/SIGTERM and
// SHUTDOWN stop it (STOPPING=1 first); SIGHUP reopens the log file.
//
// Exit status: 0 after a clean shutdown, 1 on a bad configuration or when the server cannot
// start (e.g. the port is in use).
#include <pthread.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <string_view>
#include <thread>

#include "cluster_node.h"
#include "cluster/raft_config.h"
#include "config/config_parser.h"
#include "config/log_setup.h"
#include "latch/server.h"
#include "net/fd_limit.h"
#include "service/daemon.h"
#include "service/systemd_notify.h"
#include "testing/test_mode.h"

#ifndef LATCH_GIT_REVISION
#define LATCH_GIT_REVISION "unknown"
#endif

namespace {

using latch::service::Supervision;

const char* SignalName(int signal) { return signal == SIGINT ? "SIGINT" : "SIGTERM"; }

// Tells the supervisor about the server's life; each message at most once.
class Supervisor {
 public:
  explicit Supervisor(Supervision mode) : mode_(mode) {}

  void LogMode() const {
    if (mode_ == Supervision::kSystemd) {
      if (!notifier_.enabled()) {
        spdlog::warn(
            "systemd supervision requested or auto-detected, but NOTIFY_SOCKET "
            "environment variable is not set");
        return;
      }
      spdlog::info(
          "Supervised by systemd. Please make sure you set appropriate values for "
          "TimeoutStartSec and TimeoutStopSec in your service unit.");
    } else if (mode_ == Supervision::kUpstart) {
      spdlog::info("Supervised by upstart, will stop to signal readiness.");
    }
  }
  void Ready() const {
    if (mode_ == Supervision::kSystemd && notifier_.enabled()) {
      if (!notifier_.Notify("STATUS=Ready to accept connections\nREADY=1\n")) {
        spdlog::warn("Can't notify systemd that latchd is ready: {}", std::strerror(errno));
      }
    } else if (mode_ == Supervision::kUpstart) {
      // upstart's "expect stop": the job is started when the process stops itself once.
      std::raise(SIGSTOP);
      ::unsetenv("UPSTART_JOB");
    }
  }
  void Stopping() {
    if (mode_ != Supervision::kSystemd || stopping_sent_.exchange(true)) return;
    notifier_.Notify("STATUS=Shutting down\nSTOPPING=1\n");
  }

 private:
  Supervision mode_;
  latch::service::SystemdNotifier notifier_;
  std::atomic<bool> stopping_sent_{false};
};

// Prints the configuration error as redis-server does and returns the exit status.
int ConfigFailure(const latch::ConfigError& e) {
  std::cerr << e.what();
  if (e.line() == 0) std::cerr << '\n';
  return 1;
}

void LogStartup(const latch::config::LoadedConfig& config) {
  spdlog::warn("oO0OoO0OoO0Oo latchd is starting oO0OoO0OoO0Oo");
  spdlog::warn("latchd version={}, git={}, bits={}, pid={}, just started", LATCH_VERSION,
               LATCH_GIT_REVISION, sizeof(void*) * 8, static_cast<long>(getpid()));
  spdlog::warn("Configuration loaded");
  if (!config.ignored.empty()) {
    std::string names;
    for (const std::string& name : config.ignored) {
      if (!names.empty()) names += ", ";
      names += name;
    }
    spdlog::info("ignored by latchd (not applicable to a lock server): {}", names);
  }
}

// Runs until a shutdown signal: SIGHUP reopens the log file and waits again. Detached: after
// SHUTDOWN it stays in sigwait() until the process exits.
void RunSignalThread(latch::Server& server, Supervisor& supervisor, sigset_t signals) {
  std::thread([&server, &supervisor, signals] {
    while (true) {
      int signal = 0;
      if (sigwait(&signals, &signal) != 0) signal = SIGTERM;
      if (signal == SIGHUP) {
        latch::config::ReopenLogFile(*spdlog::default_logger());
        spdlog::info("Received SIGHUP, reopening the log file");
        continue;
      }
      spdlog::warn("Received {} scheduling shutdown...", SignalName(signal));
      supervisor.Stopping();
      server.stop();
      return;
    }
  }).detach();
}

}  // namespace

namespace latch {
ServerState& InternalState(Server& server);  // server.cpp
}  // namespace latch

int main(int argc, char** argv) {
  switch (latch::config::ClassifyCommandLine(argc, argv)) {
    case latch::config::CommandLineAction::kVersion:
      std::cout << latch::config::VersionText() << " git=" LATCH_GIT_REVISION << '\n';
      return 0;
    case latch::config::CommandLineAction::kHelp:
      std::cout << latch::config::UsageText("latchd");
      return 0;
    case latch::config::CommandLineAction::kRun:
      break;
  }

  latch::config::LoadedConfig config;
  try {
    config = latch::config::LoadConfig(argc, argv);
  } catch (const latch::ConfigError& e) {
    return ConfigFailure(e);
  }
  latch::Options& options = config.options;
  // A cluster node checks its raft-* directives before anything starts (raft-peers malformed,
  // duplicated, or without this node): nothing is served, nothing written.
  if (!options.raft_peers.empty()) {
    latch::cluster::RaftConfig raft;
    if (auto refused = latch::cluster::ResolveRaftConfig(options, &raft)) {
      std::cerr << "*** FATAL CONFIG ERROR (latchd " LATCH_VERSION ") ***\n" << *refused << '\n';
      return 1;
    }
  }
  if (auto refused = latch::testing::PrepareTestMode(options)) {
    std::cerr << *refused << '\n';
    return 1;
  }
  const Supervision supervision = latch::service::ResolveSupervision(options.supervised);
  // As Redis: a supervised server stays in the foreground whatever daemonize says.
  if (options.daemonize && supervision == Supervision::kNone) latch::service::Daemonize();
  if (!options.dir.empty() && ::chdir(options.dir.c_str()) != 0) {
    std::cerr << "Can't chdir to '" << options.dir << "': " << std::strerror(errno) << '\n';
    return 1;
  }
  // Paths under dir (the journal's) are now relative to the working directory.
  if (!options.dir.empty()) options.dir.clear();

  try {
    // The default logger is also registered under its name, which the server then uses.
    auto logger = latch::config::MakeLogger(options);
    options.logger_name = logger->name();
    spdlog::set_default_logger(std::move(logger));
  } catch (const std::exception& e) {
    std::cerr << e.what() << '\n';
    return 1;
  }
  LogStartup(config);
  Supervisor supervisor(supervision);
  supervisor.LogMode();
  // Redis writes a pid file when asked, or when daemonized without one named.
  latch::service::PidFile pid_file;
  std::string pid_path = options.pidfile;
  if (pid_path.empty() && options.daemonize && supervision == Supervision::kNone) {
    pid_path = "/var/run/latchd.pid";
  }
  if (!pid_path.empty()) {
    if (std::string error = pid_file.Write(pid_path); !error.empty()) {
      spdlog::warn("Failed to write PID file: {}", error);
    }
  }

  // Block the signals before any thread exists, so every server thread inherits the mask and
  // only sigwait() sees them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGHUP);
  if (pthread_sigmask(SIG_BLOCK, &signals, nullptr) != 0) {
    spdlog::critical("Can't block SIGINT/SIGTERM/SIGHUP, aborting.");
    return 1;
  }

  // Before the server exists: it reads maxclients from the options it is given.
  if (!latch::AdjustOpenFilesLimit(options, *latch::config::ServerLogger(options))) return 1;

  latch::Server server(options);
  int port = 0;
  try {
    port = server.start();
  } catch (const std::exception& e) {
    // The port was bound: what failed came after it (the journal's load) and is logged.
    if (server.port() != 0) return 1;
    // The TLS files: the server logged Redis's lines (nothing was listening yet).
    if (std::string_view(e.what()).starts_with("io-engine uring")) {
      spdlog::critical("{}, aborting", e.what());
      if (!options.logfile.empty()) std::cerr << e.what() << ", aborting\n";
      return 1;
    }
    if (std::string_view(e.what()).starts_with("Failed to configure TLS")) {
      if (!options.logfile.empty()) std::cerr << e.what() << '\n';
      return 1;
    }
    spdlog::critical("Failed listening on {}:{} (tcp), aborting: {}", options.bind, options.port,
                     e.what());
    if (!options.logfile.empty()) {
      std::cerr << "Failed listening on " << options.bind << ':' << options.port
                << " (tcp), aborting: " << e.what() << '\n';
    }
    return 1;
  }
  spdlog::info("latchd {} started: port={} io-threads={} shards={} pid={}", LATCH_VERSION, port,
               server.io_threads(), server.shards(), static_cast<long>(getpid()));
  spdlog::info("Ready to accept connections tcp");
  supervisor.Ready();

  // A signal and the SHUTDOWN command end the same way: wait() returns, then stop().
  RunSignalThread(server, supervisor, signals);
  server.wait();
  // Before stop() ends the cluster node: did it stop itself on a fault (a dirty leader, a log
  // it cannot apply)? A supervisor must see a failure (systemd Restart=on-failure).
  const bool failed = latch::cluster::Failed(latch::InternalState(server));
  supervisor.Stopping();
  if (failed) {
    // The clients are gone (the shutdown closed them); what is left is libraft, and its close
    // is where libraft 0.15 fails a node stopping mid-truncation: a use after free when the
    // truncation's thread-pool work outlives raft_uv_close (SIGSEGV in uvTruncateAfterWorkCb),
    // and a log left with a gap that the next raft_start refuses ("closed segment ... is past
    // last snapshot", canonical/raft#372; 1 in about 30 runs of the 5-node chaos test). A
    // dirty node is exactly one whose uncommitted entries the new leader truncates. So it
    // ends as a crash would, which is what libraft's files are made to survive (and what
    // the chaos test's kill -9 checks): its state on disk is as the last write left it.
    spdlog::critical("latchd stopped on a fault (logged above): exiting with status 1");
    spdlog::shutdown();
    pid_file.Remove();
    std::_Exit(1);
  }
  server.stop();
  spdlog::warn("latchd is now ready to exit, bye bye...");
  spdlog::shutdown();
  return 0;
}
