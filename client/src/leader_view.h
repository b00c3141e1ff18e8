#pragma once
// Which node of several a Client talks to (ClientOptions::nodes: a latch cluster, or a Redis
// master with its replicas). Writes and linearizable reads go to the one leader, so the client
// asks ROLE on every new connection and follows what it is told:
//   - "master": this node serves;
//   - "slave" naming a master: connect there instead (a latch follower names the Raft leader
//     it knows, a Redis replica its master);
//   - "slave" with no master known ("?" / port 0, a latch node during an election): try the
//     next node, and when none leads, wait and ask again (the calls wait, up to their timeout).
// A -READONLY or -TRYAGAIN reply (the node stopped leading, or leads but is not ready yet) sends
// the connection back to this search; a single command that got it never ran and is sent again.
//
// One LeaderView per Client, shared by its connections; used on the client's I/O thread only.
#include <optional>
#include <string>
#include <vector>

#include "latch/client.h"

namespace latch::client_internal {

struct NodeRole {
  enum class Kind {
    kLeader,     // ROLE says master (or the server has no ROLE: a plain single server)
    kFollower,   // ROLE names the master to go to: `leader`
    kNoLeader,   // a replica that knows no master now
    kNotServer,  // something else (a Sentinel): not a node to send calls to
  };
  Kind kind = Kind::kLeader;
  Endpoint leader;
};

// `reply`: the answer to ROLE on a connection to `node`.
NodeRole RoleFromReply(const Reply& reply, const Endpoint& node);

// True for the error replies after which the same command may be sent to the leader: it did
// not run (READONLY: a follower or a demoted master; TRYAGAIN: no leader ready yet).
bool IsNotLeaderReply(const Reply& reply);

class LeaderView {
 public:
  explicit LeaderView(std::vector<Endpoint> nodes) : nodes_(std::move(nodes)) {}

  // The nodes to try, in order: the leader last seen first, then the others, starting after
  // the one tried first last time (so a dead node is not always asked first).
  std::vector<Endpoint> Candidates();
  void SetLeader(const Endpoint& leader) { leader_ = leader; }
  void ForgetLeader() { leader_.reset(); }
  std::size_t size() const { return nodes_.size(); }

 private:
  std::vector<Endpoint> nodes_;
  std::optional<Endpoint> leader_;
  std::size_t next_ = 0;
};

}  // namespace latch::client_internal
