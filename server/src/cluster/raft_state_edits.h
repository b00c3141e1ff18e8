#pragma once
// The one place latch writes libraft's `struct raft` fields itself: libraft 0.15 has no call
// to start an election now (docs/CLUSTER.md, "Failover"). Loop thread only. Compiled to a
// no-op unless CMake found libraft 0.15 (LATCH_LIBRAFT_0_15): the fields' meaning is that
// version's.
extern "C" {
#include <raft.h>
}

namespace latch::cluster {

// True when this build can edit the fields (the leader probe is compiled out otherwise).
bool RaftStateEditsSupported();

// The follower's known leader, or 0 when it knows none (or is no follower).
raft_id FollowerLeader(const struct raft* r);

// Called when the follower knows that its leader's process is gone: forgets the leader (so
// this node grants votes to the other followers at once) and makes the election timer expire
// `delay_ms` from now (the next tick after that starts a pre-vote). No-op and false when `r`
// is no follower or still follows another leader than `dead_leader`.
bool ExpireElectionTimer(struct raft* r, raft_id dead_leader, unsigned delay_ms);

}  // namespace latch::cluster
