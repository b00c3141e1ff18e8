#include "cluster/raft_config.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <charconv>
#include <set>
#include <utility>

namespace latch::cluster {
namespace {

bool ParseNumber(std::string_view s, std::uint64_t max, std::uint64_t* v) {
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
  return ec == std::errc() && end == s.data() + s.size() && !s.empty() && *v <= max;
}

}  // namespace

std::optional<std::string> ResolveRaftHost(const std::string& host, std::string* ip) {
  in_addr literal{};
  if (inet_pton(AF_INET, host.c_str(), &literal) == 1) {
    *ip = host;
    return std::nullopt;
  }
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (const int rv = getaddrinfo(host.c_str(), nullptr, &hints, &found); rv != 0) {
    return "raft-peers host '" + host + "' has no IPv4 address: " + gai_strerror(rv);
  }
  char text[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(found->ai_addr)->sin_addr, text, sizeof text);
  freeaddrinfo(found);
  *ip = text;
  return std::nullopt;
}

namespace {

// raft-addr HOST:PORT as libraft takes it, "a.b.c.d:port".
std::optional<std::string> ResolveRaftAddr(const std::string& addr, std::string* out) {
  const std::size_t colon = addr.rfind(':');
  std::uint64_t port = 0;
  if (colon == std::string::npos ||
      !ParseNumber(std::string_view(addr).substr(colon + 1), 65535, &port) || port == 0) {
    return "bad raft-addr '" + addr + "': expected HOST:PORT";
  }
  std::string ip;
  if (auto reason = ResolveRaftHost(addr.substr(0, colon), &ip)) return reason;
  *out = ip + ":" + std::to_string(port);
  return std::nullopt;
}

}  // namespace

std::optional<std::string> ResolveRaftConfig(const Options& o, RaftConfig* out) {
  std::vector<config::PeerSpec> peers;
  if (auto reason = config::ParsePeers(o.raft_peers, &peers)) return reason;
  if (o.raft_id == 0) return std::string("raft-peers is set but raft-id is not");
  if (o.appendonly) {
    return std::string(
        "appendonly yes cannot be used with raft-peers: the Raft log in raft-dir "
        "is a cluster node's journal");
  }
  if (o.raft_heartbeat_interval >= o.raft_election_timeout) {
    return std::string("raft-heartbeat-interval must be below raft-election-timeout");
  }
  RaftConfig c;
  c.id = o.raft_id;
  c.dir = o.raft_dir.empty() ? (o.dir.empty() ? std::string("raft") : o.dir + "/raft") : o.raft_dir;
  c.rest_port = o.rest_port;
  c.election_timeout_ms = o.raft_election_timeout;
  c.heartbeat_interval_ms = o.raft_heartbeat_interval;
  c.snapshot_threshold = static_cast<unsigned>(o.raft_snapshot_threshold);
  c.snapshot_trailing = static_cast<unsigned>(o.raft_snapshot_trailing);
  c.install_snapshot_timeout_ms = o.raft_install_snapshot_timeout;
  c.leader_probe = o.raft_leader_probe;
  std::set<std::string> resolved;
  for (const config::PeerSpec& p : peers) {
    std::string ip;
    if (auto reason = ResolveRaftHost(p.host, &ip)) return reason;
    RaftConfig::Member m{p.id, ip + ":" + std::to_string(p.raft_port), p.host, p.client_port};
    if (!resolved.insert(m.raft_address).second) {
      return "duplicate raft-peers address " + m.raft_address + " (after resolving " + p.host + ")";
    }
    if (p.id == o.raft_id) c.address = m.raft_address;
    c.members.push_back(std::move(m));
  }
  std::string own;  // raft-addr resolved; empty when not set
  if (!o.raft_addr.empty()) {
    if (auto reason = ResolveRaftAddr(o.raft_addr, &own)) return reason;
  }
  if (c.address.empty() && !own.empty()) {
    // Not in the first membership but with an address of its own: a node that joins the
    // running cluster (RAFT ADD on its leader). It bootstraps nothing (docs/CLUSTER.md,
    // "Membership and operations"); it lists itself for ROLE and SENTINEL.
    if (!resolved.insert(own).second) {
      return "raft-addr " + o.raft_addr + " is another member's address in raft-peers";
    }
    c.join = true;
    c.address = own;
    c.members.push_back(
        RaftConfig::Member{o.raft_id, own, o.raft_addr.substr(0, o.raft_addr.rfind(':')), o.port});
  }
  if (c.address.empty()) {
    return "this node (raft-id " + std::to_string(o.raft_id) +
           ") is not in raft-peers (a node joining a running cluster sets raft-addr)";
  }
  if (!own.empty() && own != c.address) {
    return "raft-addr " + o.raft_addr + " is not this node's address in raft-peers (" + c.address +
           ")";
  }
  *out = std::move(c);
  return std::nullopt;
}

}  // namespace latch::cluster
