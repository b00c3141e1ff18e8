// latch-reservation: the ticket-reservation demo service.
//
//   latch-reservation --pg "host=127.0.0.1 port=5433 dbname=tickets user=app"
//                     --lock-url redis://127.0.0.1:6380 [--port 8080] [--bind 127.0.0.1]
//                     [--hold-ms 900000] [--lock-ttl-ms 5000] [--lock-wait-ms 0]
//                     [--sweep-ms 1000] [--workers 16] [--pg-pool 10] [--no-seat-locks]
//                     [--no-warm] [--no-access-log]
//
// Prints "listening on http://<bind>:<port>" once serving, then the seat map's URL; writes one
// access log line per request on stderr; stops on SIGINT/SIGTERM.
#include <signal.h>

#include <charconv>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <string_view>

#include "service.h"

namespace {

void Usage() {
  std::fprintf(stderr,
               "usage: latch-reservation --pg CONNINFO --lock-url redis://HOST:PORT\n"
               "       [--port N] [--bind ADDR] [--hold-ms N] [--lock-ttl-ms N]\n"
               "       [--lock-wait-ms N] [--sweep-ms N] [--workers N] [--pg-pool N]\n"
               "       [--no-seat-locks] [--no-warm] [--no-access-log]\n");
}

bool ParseNumber(std::string_view text, long long* out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size() && *out >= 0;
}

}  // namespace

int main(int argc, char** argv) {
  latch::demo::ServiceOptions options;
  for (int i = 1; i < argc; ++i) {
    std::string_view flag = argv[i];
    if (flag == "--no-seat-locks") {
      options.lock_seats = false;
      continue;
    }
    if (flag == "--no-warm") {
      options.warm_connections = false;
      continue;
    }
    if (flag == "--no-access-log") {
      options.access_log = nullptr;
      continue;
    }
    if (flag == "--help" || flag == "-h") {
      Usage();
      return 0;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "missing value after %s\n", argv[i]);
      Usage();
      return 2;
    }
    std::string_view value = argv[++i];
    long long n = 0;
    const bool numeric = ParseNumber(value, &n);
    auto ms = std::chrono::milliseconds(n);
    if (flag == "--pg") {
      options.pg_conninfo = value;
    } else if (flag == "--lock-url") {
      options.lock_url = value;
    } else if (flag == "--bind") {
      options.bind = value;
    } else if (!numeric) {
      std::fprintf(stderr, "%s needs a non-negative integer, got \"%s\"\n", argv[i - 1], argv[i]);
      return 2;
    } else if (flag == "--port" && n <= 65535) {
      options.port = static_cast<int>(n);
    } else if (flag == "--hold-ms" && n > 0) {
      options.hold = ms;
    } else if (flag == "--lock-ttl-ms" && n > 0) {
      options.lock_ttl = ms;
    } else if (flag == "--lock-wait-ms") {
      options.lock_wait = ms;
    } else if (flag == "--sweep-ms") {
      options.sweep_interval = ms;
    } else if (flag == "--workers" && n > 0 && n <= 1024) {
      options.workers = static_cast<std::size_t>(n);
    } else if (flag == "--pg-pool" && n > 0 && n <= 1024) {
      options.pg_pool = static_cast<std::size_t>(n);
    } else {
      std::fprintf(stderr, "unknown option or value out of range: %s %s\n", argv[i - 1], argv[i]);
      Usage();
      return 2;
    }
  }
  if (options.pg_conninfo.empty() || options.lock_url.empty()) {
    Usage();
    return 2;
  }

  // Signals are taken by sigwait below; block them before any thread starts.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  latch::demo::Service service(options);
  try {
    int port = service.Start();
    std::printf("listening on http://%s:%d\n", options.bind.c_str(), port);
    std::printf("seat map: http://%s:%d/  (API: http://%s:%d/openapi.json)\n",
                options.bind.c_str(), port, options.bind.c_str(), port);
    std::fflush(stdout);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "latch-reservation: %s\n", e.what());
    return 1;
  }
  int received = 0;
  sigwait(&signals, &received);
  std::fprintf(stderr, "latch-reservation: %s, stopping\n", strsignal(received));
  service.Stop();
  return 0;
}
