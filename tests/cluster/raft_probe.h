#pragma once
// RAFT STATUS over a real connection, for the cluster tests: its "field:value" lines as a map
// (the reply is a bulk string in RESP2), and a numeric field of it.
#include <cstdint>
#include <map>
#include <string>

#include "cluster/latchd_cluster.h"

namespace latch::test {

using RaftFields = std::map<std::string, std::string>;

// Empty when the node does not answer with a status (down, paused, not a cluster node).
inline RaftFields RaftStatus(int port) {
  const std::string reply = Cmd(port, {"RAFT", "STATUS"});
  RaftFields fields;
  if (!reply.starts_with("$")) return fields;
  std::size_t pos = reply.find("\r\n") + 2;
  while (pos < reply.size()) {
    const std::size_t end = reply.find("\r\n", pos);
    if (end == std::string::npos) break;
    const std::string line = reply.substr(pos, end - pos);
    pos = end + 2;
    const std::size_t colon = line.find(':');
    if (colon != std::string::npos) fields[line.substr(0, colon)] = line.substr(colon + 1);
  }
  return fields;
}

// 0 when the field is absent or empty.
inline std::uint64_t RaftNumber(const RaftFields& f, const std::string& key) {
  const auto it = f.find(key);
  return it == f.end() || it->second.empty() ? 0 : std::stoull(it->second);
}

}  // namespace latch::test
