#pragma once
// raft-peers (docs/CLUSTER.md, "Configuration"): "ID=HOST:RAFTPORT:CLIENTPORT ...", read by the
// config parser and by a cluster node's start-up check (cluster/raft_config.h).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace latch::config {

// One member of raft-peers: "ID=HOST:RAFTPORT:CLIENTPORT".
struct PeerSpec {
  std::uint64_t id = 0;
  std::string host;
  int raft_port = 0;
  int client_port = 0;
};

// Parses raft-peers. Returns the reason when a member is malformed or two share an id, a Raft
// address or a client address (host and port as written; ResolveRaftConfig compares the
// resolved ones too).
std::optional<std::string> ParsePeers(std::string_view text, std::vector<PeerSpec>* out);

}  // namespace latch::config
