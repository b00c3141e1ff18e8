// ClusterLog's member entries (member_table.h; docs/CLUSTER.md, "Members and their client
// addresses"): RAFT ADD records the new node's client address in the log before libraft adds
// it, RAFT REMOVE forgets it after, and a new leader records its own when the others could
// not derive it; every node applies them into its MemberTable, which discovery joins with
// libraft's configuration.
#include <spdlog/logger.h>

#include <utility>

#include "cluster/cluster_log.h"

namespace latch::cluster {

std::vector<KnownMember> ClusterLog::KnownMembers() const {
  return JoinMembers(config_, node_->Members(), members_.Copy());
}

void ClusterLog::AddMember(std::uint64_t id, std::string raft_address, ClientAddress client,
                           RaftNode::ChangeDone done) {
  // The address first: once libraft appends the configuration that counts the node, every
  // node that sees it (the new one included) has applied, or will apply before it, where the
  // node takes clients, so no follower ever knows it as leader without its address.
  node_->Propose(EncodeMemberSet(id, client), [this, id, raft_address = std::move(raft_address),
                                               done = std::move(done)](const ProposeResult& r) {
    if (r.status != ProposeStatus::kOk) {
      return done("its client address was not committed: " + r.error);
    }
    node_->Add(id, raft_address, done);
  });
}

void ClusterLog::RemoveMember(std::uint64_t id, RaftNode::ChangeDone done) {
  node_->Remove(id, [this, id, done = std::move(done)](const std::string& error) {
    if (error.empty()) {
      // Discovery already leaves it out (it is not in the configuration); forgetting its
      // address keeps the table, and so the snapshots, to the members there are. An id added
      // again later gets a new entry from its RAFT ADD.
      node_->Propose(EncodeMemberForget(id), [](const ProposeResult&) {});
    }
    done(error);
  });
}

bool ClusterLog::ApplyMemberEntry(std::string_view after_nonce, std::string* error) {
  std::string_view lines;
  if (!MemberEntryLines(after_nonce, &lines)) {
    *error = "an entry with nonce 0 that is not a member entry";
    return false;
  }
  if (!members_.ApplyLines(lines, error)) return false;
  p_.log.info("Raft node {}: member change applied: {}", config_.id,
              lines.substr(0, lines.find('\n')));
  return true;
}

// On the proposer thread, when this node starts serving as the leader. Followers find the
// leader's client address in the table, else (a founding member) in raft-peers; when that
// would not be this node's own (a node that joined: its RAFT ADD named another host than its
// raft-addr, or came from a latchd without member entries), or this node serves REST on a
// port the table does not hold (followers relay REST requests there: rest/leader_proxy.h),
// it is recorded. A leader whose entry is current proposes nothing.
void ClusterLog::AnnounceSelf() {
  const RaftConfig::Member* self = nullptr;
  for (const RaftConfig::Member& m : config_.members) {
    if (m.id == config_.id) self = &m;
  }
  if (self == nullptr) return;
  const ClientAddress own{self->client_host, self->client_port, config_.rest_port};
  const MemberTable::Map table = members_.Copy();
  if (auto it = table.find(config_.id); it != table.end()) {
    if (it->second == own) return;
  } else if (!config_.join && own.rest_port == 0) {
    return;  // a founding member without REST: every node's raft-peers gives this address
  }
  p_.log.info("Raft node {}: recording its client address {}:{} (REST port {}) in the log",
              config_.id, own.host, own.port, own.rest_port);
  node_->Propose(EncodeMemberSet(config_.id, own), [this](const ProposeResult& r) {
    if (r.status != ProposeStatus::kOk) {
      p_.log.warn(
          "Raft node {}: its client address was not recorded ({}); the next leader "
          "term records it",
          config_.id, r.error);
    }
  });
}

}  // namespace latch::cluster
