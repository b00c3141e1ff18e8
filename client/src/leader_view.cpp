#include "leader_view.h"

namespace latch::client_internal {
namespace {

bool SameNode(const Endpoint& a, const Endpoint& b) { return a.host == b.host && a.port == b.port; }

bool StartsWithWord(const std::string& s, std::string_view word) {
  return s.size() >= word.size() && s.compare(0, word.size(), word) == 0 &&
         (s.size() == word.size() || s[word.size()] == ' ');
}

}  // namespace

NodeRole RoleFromReply(const Reply& reply, const Endpoint& node) {
  NodeRole role;
  // A server without ROLE (or one that refuses it to this user) is taken as a single server.
  if (reply.is_error() || !reply.is_aggregate() || reply.elements.empty()) return role;
  const std::string& kind = reply.elements[0].str;
  if (kind == "master") return role;
  if (kind != "slave" || reply.elements.size() < 3) {
    role.kind = NodeRole::Kind::kNotServer;
    return role;
  }
  const Reply& host = reply.elements[1];
  const Reply& port = reply.elements[2];
  const std::int64_t p = port.is_integer() ? port.integer : 0;
  if (!host.is_string() || host.str.empty() || host.str == "?" || p <= 0 || p > 65535) {
    role.kind = NodeRole::Kind::kNoLeader;
    return role;
  }
  role.kind = NodeRole::Kind::kFollower;
  role.leader = node;  // the same user, password, database and TLS settings
  role.leader.host = host.str;
  role.leader.port = static_cast<int>(p);
  return role;
}

bool IsNotLeaderReply(const Reply& reply) {
  return reply.is_error() &&
         (StartsWithWord(reply.str, "READONLY") || StartsWithWord(reply.str, "TRYAGAIN"));
}

std::vector<Endpoint> LeaderView::Candidates() {
  std::vector<Endpoint> order;
  if (leader_) order.push_back(*leader_);
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    const Endpoint& n = nodes_[(next_ + i) % nodes_.size()];
    if (!leader_ || !SameNode(n, *leader_)) order.push_back(n);
  }
  next_ = (next_ + 1) % nodes_.size();
  return order;
}

}  // namespace latch::client_internal
