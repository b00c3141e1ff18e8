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

// The IPv4 literal of `host` (libraft's transport takes nothing else).
std::optional<std::string> ResolveIpv4(const std::string& host, std::string* ip) {
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
  c.election_timeout_ms = o.raft_election_timeout;
  c.heartbeat_interval_ms = o.raft_heartbeat_interval;
  c.snapshot_threshold = static_cast<unsigned>(o.raft_snapshot_threshold);
  c.snapshot_trailing = static_cast<unsigned>(o.raft_snapshot_trailing);
  std::set<std::string> resolved;
  for (const config::PeerSpec& p : peers) {
    std::string ip;
    if (auto reason = ResolveIpv4(p.host, &ip)) return reason;
    RaftConfig::Member m{p.id, ip + ":" + std::to_string(p.raft_port), p.host, p.client_port};
    if (!resolved.insert(m.raft_address).second) {
      return "duplicate raft-peers address " + m.raft_address + " (after resolving " + p.host + ")";
    }
    if (p.id == o.raft_id) c.address = m.raft_address;
    c.members.push_back(std::move(m));
  }
  if (c.address.empty()) {
    return "this node (raft-id " + std::to_string(o.raft_id) + ") is not in raft-peers";
  }
  if (!o.raft_addr.empty()) {
    const std::size_t colon = o.raft_addr.rfind(':');
    std::uint64_t port = 0;
    if (colon == std::string::npos ||
        !ParseNumber(std::string_view(o.raft_addr).substr(colon + 1), 65535, &port) || port == 0) {
      return "bad raft-addr '" + o.raft_addr + "': expected HOST:PORT";
    }
    std::string ip;
    if (auto reason = ResolveIpv4(o.raft_addr.substr(0, colon), &ip)) return reason;
    if (ip + ":" + std::to_string(port) != c.address) {
      return "raft-addr " + o.raft_addr + " is not this node's address in raft-peers (" +
             c.address + ")";
    }
  }
  *out = std::move(c);
  return std::nullopt;
}

}  // namespace latch::cluster
