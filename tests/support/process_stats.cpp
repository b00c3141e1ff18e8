#include "support/process_stats.h"

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

namespace latch::test {
namespace {
std::int64_t StatusKb(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::stoll(line.substr(field.size() + 1)) * 1024;
  }
  return -1;
}
}  // namespace

std::int64_t RssBytes(pid_t pid) { return StatusKb(pid, "VmRSS"); }
std::int64_t VmSizeBytes(pid_t pid) { return StatusKb(pid, "VmSize"); }

std::int64_t CpuTimeMs(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto paren = text.rfind(')');
  if (paren == std::string::npos) return -1;
  std::istringstream fields(text.substr(paren + 2));
  std::string field;
  std::int64_t ticks = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {
    if (i == 14 || i == 15) ticks += std::stoll(field);  // utime, stime
  }
  return ticks * 1000 / sysconf(_SC_CLK_TCK);
}

double CpuMsPerSecondOver(pid_t pid, std::chrono::milliseconds window) {
  const auto start = std::chrono::steady_clock::now();
  const std::int64_t cpu = CpuTimeMs(pid);
  std::this_thread::sleep_for(window);  // the measured interval itself
  const std::int64_t used = CpuTimeMs(pid) - cpu;
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return static_cast<double>(used) / seconds;
}

bool ProcessAlive(pid_t pid) {
  if (::kill(pid, 0) != 0) return false;
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto paren = text.rfind(')');
  return paren != std::string::npos && text.size() > paren + 2 && text[paren + 2] != 'Z';
}

std::string LatchdUnderTest() {
  const char* path = std::getenv("LATCHD_UNDER_TEST");
  return path != nullptr && *path != '\0' ? path : LATCHD_PATH;
}

}  // namespace latch::test
