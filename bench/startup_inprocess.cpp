// Start to first PONG of an in-process latch::testing::ScopedServer: construct it, connect,
// send PING, read +PONG; then destroy it. Prints the median, p10 and p90 of N runs (default
// 50) in microseconds, and the median of the destructor (stop) alone. bench/startup.py runs it.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <vector>

#include "latch/testing/scoped_server.h"

namespace {

using Clock = std::chrono::steady_clock;

bool Ping(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
            ::write(fd, "PING\r\n", 6) == 6;
  char buf[16];
  ok = ok && ::read(fd, buf, sizeof(buf)) == 7;
  ::close(fd);
  return ok;
}

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(p * static_cast<double>(v.size() - 1))];
}

}  // namespace

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::atoi(argv[1]) : 50;
  std::vector<double> start_us, stop_us;
  for (int i = 0; i < runs; ++i) {
    const auto t0 = Clock::now();
    std::optional<latch::testing::ScopedServer> server(std::in_place);
    if (!Ping(server->port())) return 1;
    const auto t1 = Clock::now();
    server.reset();
    const auto t2 = Clock::now();
    start_us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    stop_us.push_back(std::chrono::duration<double, std::micro>(t2 - t1).count());
  }
  std::printf("runs=%d start_to_pong_us median=%.0f p10=%.0f p90=%.0f stop_us median=%.0f\n", runs,
              Percentile(start_us, 0.5), Percentile(start_us, 0.1), Percentile(start_us, 0.9),
              Percentile(stop_us, 0.5));
  return 0;
}
