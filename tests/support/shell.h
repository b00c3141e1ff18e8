#pragma once
// Runs a command through the shell for tests that drive real tools (redis-cli, latchd,
// redis-server). Header-only: the client tests, which do not link latch_test_support, use it.
#include <sys/wait.h>

#include <cstdio>
#include <string>
#include <utility>

namespace latch::test {

// Runs a shell command under timeout(1) and returns its stdout+stderr and exit status.
inline std::pair<std::string, int> RunShellCommand(const std::string& command, int seconds = 10) {
  std::FILE* pipe =
      ::popen(("timeout " + std::to_string(seconds) + " " + command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return {"popen failed", -1};
  std::string out;
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0;) out.append(buffer, n);
  const int status = ::pclose(pipe);
  return {out, WIFEXITED(status) ? WEXITSTATUS(status) : -1};
}

}  // namespace latch::test
