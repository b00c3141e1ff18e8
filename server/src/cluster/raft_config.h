#pragma once
// The raft-* directives' start-up check (docs/CLUSTER.md, "Configuration"), which stops latchd
// with a clear error before it serves anything. Part of latch_server whether or not
// latch_cluster (libraft) is built.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/raft_peers.h"
#include "latch/options.h"

namespace latch::cluster {

// What a cluster node starts with, resolved: libraft takes IPv4 literals only.
struct RaftConfig {
  std::uint64_t id = 0;
  std::string address;  // this node's Raft address, "a.b.c.d:port"
  struct Member {
    std::uint64_t id;
    std::string raft_address;  // "a.b.c.d:port"
    std::string client_host;   // as written in raft-peers (ROLE, forwarding)
    int client_port;
  };
  std::vector<Member> members;  // raft-peers (and, when join, this node last)
  // Not in raft-peers, with a raft-addr: this node joins the running cluster (RAFT ADD) and
  // must not bootstrap a configuration of its own.
  bool join = false;
  int rest_port = 0;  // rest-port: recorded in the log when this node leads (member_table.h)
  std::string dir;
  std::int64_t election_timeout_ms = 1000;
  std::int64_t heartbeat_interval_ms = 100;
  unsigned snapshot_threshold = 8192;  // raft-snapshot-threshold
  unsigned snapshot_trailing = 8192;   // raft-snapshot-trailing
  std::int64_t install_snapshot_timeout_ms = 5000;  // raft-install-snapshot-timeout
  bool leader_probe = true;                          // raft-leader-probe
};

// The start-up check of the raft-* options (raft_peers must be set). Returns the cluster's
// configuration, or the reason latchd must not start (malformed raft-peers, duplicate ids or
// addresses, a host that does not resolve, raft-id missing or not among the peers, appendonly,
// a heartbeat not below the election timeout).
std::optional<std::string> ResolveRaftConfig(const Options& o, RaftConfig* out);

// The IPv4 literal of `host` (libraft's transport takes nothing else): `host` itself when it
// is one, else its first IPv4 address. The reason when it has none.
std::optional<std::string> ResolveRaftHost(const std::string& host, std::string* ip);

}  // namespace latch::cluster
