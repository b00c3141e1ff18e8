#pragma once
// TCP_NODELAY on every Raft connection of a libraft TCP transport (docs/CLUSTER.md, "libraft
// facts"). Internal to latch_cluster (raft_loop.cpp): it brings in raft/uv.h.
extern "C" {
#include <raft.h>
#include <raft/uv.h>
}

namespace latch::cluster {

// Wraps `t`'s listen and connect, after raft_uv_tcp_init and before raft_start: each
// connection they hand libraft, accepted or made, has Nagle's algorithm off first.
void DisableNagle(raft_uv_transport* t);

}  // namespace latch::cluster
