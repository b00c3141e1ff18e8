#pragma once
// Where each member of the cluster takes clients (docs/CLUSTER.md, "Members and their client
// addresses"). libraft replicates only the Raft addresses of its configuration; the client
// address of a member added at run time (RAFT ADD id host:raftport:clientport) exists on the
// leader that added it. So the log carries it: a member entry, applied on every node into a
// MemberTable and kept in snapshots, and discovery (ROLE, INFO, SENTINEL, forwarding) joins
// libraft's current configuration with the table, raft-peers being the fallback for the
// founding members.
//
// A member entry is a Raft entry whose first 8 bytes (where a log entry has its proposer's
// nonce, never 0) are 0, then kMemberEntryMagic and one change a line:
//   set <id> <client-host> <client-port> [<rest-port>]
//   forget <id>
// A snapshot's member section is the same lines (one `set` each). Lines with an unknown first
// word are skipped, so a later version can add changes that this one ignores.
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/raft_config.h"
#include "cluster/raft_node.h"

namespace latch::cluster {

inline constexpr std::uint64_t kMemberEntryNonce = 0;
inline constexpr std::string_view kMemberEntryMagic = "LATCHMB1\n";

struct ClientAddress {
  std::string host;
  int port = 0;
  int rest_port = 0;  // its Upstash REST endpoint on `host` (0: none known)
  friend bool operator==(const ClientAddress&, const ClientAddress&) = default;
};

// A member as clients are told of it (cluster_discovery.h): its id and client address.
struct KnownMember {
  std::uint64_t id = 0;
  ClientAddress client;
};

// The replicated table: written on the Raft thread only (entries, snapshots), read anywhere.
class MemberTable {
 public:
  using Map = std::map<std::uint64_t, ClientAddress>;
  Map Copy() const;
  void Replace(Map m);
  // Applies a member entry's or a snapshot section's lines; false with the reason (and the
  // table unchanged) when a known line is malformed.
  bool ApplyLines(std::string_view lines, std::string* error);

 private:
  mutable std::mutex mu_;
  Map map_;
};

// A member entry's payload (nonce 0, magic, the line) for RaftNode::Propose.
std::string EncodeMemberSet(std::uint64_t id, const ClientAddress& a);
std::string EncodeMemberForget(std::uint64_t id);
// A snapshot's member section: one `set` line per member of `m`.
std::string EncodeMemberSection(const MemberTable::Map& m);
// The lines of a member entry's payload (after the nonce), or false when it is not one.
bool MemberEntryLines(std::string_view after_nonce, std::string_view* lines);
// Parses lines into `m` (applied in order onto what it holds); false with the reason.
bool ParseMemberLines(std::string_view lines, MemberTable::Map* m, std::string* error);

// The members clients are told of, in the configuration's order: each voter or standby of
// `current` (libraft's configuration; spares are still being caught up and serve nobody) with
// its client address from `table`, else from raft-peers (`config.members`); a member known to
// neither is left out until its entry arrives. With no configuration yet (a joining node not
// added, a node not started), `config.members` as they are.
std::vector<KnownMember> JoinMembers(const RaftConfig& config,
                                     const std::vector<RaftMember>& current,
                                     const MemberTable::Map& table);

}  // namespace latch::cluster
