// Fields of libraft 0.15 (tag v0.15.0) edited here, and who reads them:
// - follower_state.current_leader: recvRequestVote (recv_request_vote.c) rejects every vote
//   and pre-vote while a follower knows a leader (`has_leader`, unless the request carries
//   disrupt_leader). Its id is zeroed here, so a follower that detected the death grants votes
//   at once; `address` is left to libraft (convertClear frees it).
// - election_timer_start, follower_state.randomized_election_timeout: electionTimerExpired
//   (election.c) compares io->time() - election_timer_start with the randomized timeout;
//   tickFollower (tick.c) calls it on every tick (heartbeat_timeout ms apart) and converts
//   the follower to candidate (pre-vote first) once it has expired. Moving the start back
//   makes the next tick after `delay_ms` find it expired.
#include "cluster/raft_state_edits.h"

namespace latch::cluster {

#ifdef LATCH_LIBRAFT_0_15

bool RaftStateEditsSupported() { return true; }

raft_id FollowerLeader(const struct raft* r) {
  return r->state == RAFT_FOLLOWER ? r->follower_state.current_leader.id : 0;
}

bool ExpireElectionTimer(struct raft* r, raft_id dead_leader, unsigned delay_ms) {
  if (r->state != RAFT_FOLLOWER || r->follower_state.current_leader.id != dead_leader) {
    return false;
  }
  // The id only: `recvRequestVote` tests the id, and a NULL address crashed the follower in
  // libc (strlen of NULL after SIGCONT, LeaderLosingItsMajorityMidWriteClosesTheClientAndStops).
  // The address stays owned by libraft (convertClear or the next leader frees it).
  r->follower_state.current_leader.id = 0;
  const raft_time now = r->io->time(r->io);
  const raft_time span = r->follower_state.randomized_election_timeout;
  // now - start >= span once `delay_ms` has passed; never before libraft's clock origin.
  const raft_time back = span > delay_ms ? span - delay_ms : 0;
  r->election_timer_start = now > back ? now - back : 0;
  return true;
}

#else

bool RaftStateEditsSupported() { return false; }
raft_id FollowerLeader(const struct raft*) { return 0; }
bool ExpireElectionTimer(struct raft*, raft_id, unsigned) { return false; }

#endif

}  // namespace latch::cluster
