#include "durability/stall_kill.h"

#include <chrono>
#include <thread>

namespace latch::test {

std::vector<std::string> JournalWithTestCommands(const std::string& fsync) {
  return {"--appendonly", "yes", "--appendfsync", fsync, "--enable-test-commands", "yes"};
}

bool WaitForReply(RawConnection& c, const std::vector<std::string>& command,
                  const std::string& part) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    if (c.CommandArgs(command).find(part) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return false;
}

bool WaitStalled(RawConnection& c) {
  return WaitForReply(c, {"INFO", "faults"}, "\r\nfault_stalled_threads:1\r\n");
}

std::string Collect(RawConnection& c) {
  std::string bytes;
  c.WaitClosed(&bytes);
  return bytes;
}

}  // namespace latch::test
