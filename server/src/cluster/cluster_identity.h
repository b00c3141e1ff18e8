#pragma once
// Which cluster a raft-dir belongs to (docs/CLUSTER.md, "Configuration"): latch writes the
// first membership it bootstrapped (or joined) with into a file beside libraft's, and a node
// refuses to start on a directory whose file names members that raft-peers does not list, so
// that a node of one cluster never runs on (and writes to) another cluster's log.
#include <optional>
#include <string>

#include "cluster/raft_config.h"

namespace latch::cluster {

// The file, in raft-dir.
inline constexpr const char* kClusterIdentityFile = "latch-cluster";

// Creates `config.dir` if needed and checks it: a directory without the file gets one (the
// first start, or a directory made by a latchd before this check); one with the file must
// belong to this cluster: every member it names is in raft-peers with the same id and Raft
// address (raft-peers may list members added later). Returns why the node must not start, with
// nothing in the directory changed.
std::optional<std::string> CheckClusterIdentity(const RaftConfig& config);

}  // namespace latch::cluster
