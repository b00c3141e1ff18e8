#include "support/port_owner.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

namespace latch::test {
namespace {

// The inodes of sockets in state LISTEN (0A) on `port`, from one /proc/net/tcp* table:
// "sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode".
void ListeningInodes(const char* table, int port, std::set<std::string>* inodes) {
  std::ifstream in(table);
  std::string line;
  std::getline(in, line);  // header
  char want[8];
  std::snprintf(want, sizeof(want), ":%04X", port);
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
    fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >>
        timeout >> inode;
    if (state == "0A" && local.size() > 5 && local.ends_with(want)) inodes->insert(inode);
  }
}

}  // namespace

bool ListensOn(pid_t pid, int port) {
  std::set<std::string> inodes;
  ListeningInodes("/proc/net/tcp", port, &inodes);
  ListeningInodes("/proc/net/tcp6", port, &inodes);
  if (inodes.empty()) return false;
  std::error_code ec;
  const std::filesystem::path fds = "/proc/" + std::to_string(pid) + "/fd";
  for (const auto& fd : std::filesystem::directory_iterator(fds, ec)) {
    std::error_code link_ec;
    const std::string target = std::filesystem::read_symlink(fd.path(), link_ec).string();
    // "socket:[12345]"
    if (!link_ec && target.starts_with("socket:[") &&
        inodes.count(target.substr(8, target.size() - 9)) != 0) {
      return true;
    }
  }
  return false;
}

}  // namespace latch::test
