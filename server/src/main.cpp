// latchd: a thin wrapper around latch::Server, invoked like redis-server:
//
//   latchd [config-file] [--directive value ...]
//
// Exit status: 0 after a clean shutdown on SIGINT/SIGTERM, 1 on a bad configuration or when the
// server cannot start (e.g. the port is in use).
#include <pthread.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <exception>
#include <iostream>
#include <thread>

#include "config/config_parser.h"
#include "config/log_setup.h"
#include "latch/server.h"

namespace {

// The counts the server will use, for the start-up line; the rules of latch/options.h.
int EffectiveIoThreads(const latch::Options& o) {
  if (o.io_threads > 0) return o.io_threads;
  const unsigned hardware = std::thread::hardware_concurrency();
  return hardware == 0 ? 1 : static_cast<int>(hardware);
}

int EffectiveShards(const latch::Options& o) {
  if (o.shards > 0) return o.shards;
  int shards = 1;
  while (shards < 16 * EffectiveIoThreads(o)) shards *= 2;
  return shards;
}

const char* SignalName(int signal) { return signal == SIGINT ? "SIGINT" : "SIGTERM"; }

}  // namespace

int main(int argc, char** argv) {
  switch (latch::config::ClassifyCommandLine(argc, argv)) {
    case latch::config::CommandLineAction::kVersion:
      std::cout << latch::config::VersionText() << '\n';
      return 0;
    case latch::config::CommandLineAction::kHelp:
      std::cout << latch::config::UsageText("latchd");
      return 0;
    case latch::config::CommandLineAction::kRun:
      break;
  }

  latch::Options options;
  try {
    options = latch::LoadOptions(argc, argv);
  } catch (const latch::ConfigError& e) {
    std::cerr << e.what();
    if (e.line() == 0) std::cerr << '\n';
    return 1;
  }

  try {
    spdlog::set_default_logger(latch::config::MakeLogger(options));
  } catch (const std::exception& e) {
    std::cerr << e.what() << '\n';
    return 1;
  }
  const long pid = static_cast<long>(getpid());
  spdlog::warn("oO0OoO0OoO0Oo latchd is starting oO0OoO0OoO0Oo");
  spdlog::warn("latchd version={}, bits={}, pid={}, just started", LATCH_VERSION, sizeof(void*) * 8,
               pid);
  spdlog::warn("Configuration loaded");

  // Block the shutdown signals before any thread exists, so every server thread inherits the
  // mask and only sigwait() below sees them.
  sigset_t shutdown_signals;
  sigemptyset(&shutdown_signals);
  sigaddset(&shutdown_signals, SIGINT);
  sigaddset(&shutdown_signals, SIGTERM);
  if (pthread_sigmask(SIG_BLOCK, &shutdown_signals, nullptr) != 0) {
    spdlog::critical("Can't block SIGINT/SIGTERM, aborting.");
    return 1;
  }

  latch::Server server(options);
  int port = 0;
  try {
    port = server.start();
  } catch (const std::exception& e) {
    // The port was bound: what failed came after it (the journal's load) and is logged.
    if (server.port() != 0) return 1;
    spdlog::critical("Failed listening on {}:{} (tcp), aborting: {}", options.bind, options.port,
                     e.what());
    if (!options.logfile.empty()) {
      std::cerr << "Failed listening on " << options.bind << ':' << options.port
                << " (tcp), aborting: " << e.what() << '\n';
    }
    return 1;
  }
  spdlog::info("latchd {} started: port={} io-threads={} shards={} pid={}", LATCH_VERSION, port,
               EffectiveIoThreads(options), EffectiveShards(options), pid);
  spdlog::info("Ready to accept connections tcp");

  // A signal and the SHUTDOWN command end the same way: wait() returns, then stop(). The
  // signal thread is detached: after SHUTDOWN it stays in sigwait() until the process exits.
  std::thread([&server, shutdown_signals] {
    int signal = 0;
    if (sigwait(&shutdown_signals, &signal) != 0) signal = SIGTERM;
    spdlog::warn("Received {} scheduling shutdown...", SignalName(signal));
    server.stop();
  }).detach();
  server.wait();
  server.stop();
  spdlog::warn("latchd is now ready to exit, bye bye...");
  spdlog::shutdown();
  return 0;
}
