#include "config/raft_peers.h"

#include <charconv>
#include <set>
#include <utility>

namespace latch::config {
namespace {

bool ParseNumber(std::string_view s, std::uint64_t max, std::uint64_t* v) {
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
  return ec == std::errc() && end == s.data() + s.size() && !s.empty() && *v <= max;
}

std::optional<std::string> ParseMember(std::string_view word, PeerSpec* p) {
  const std::string bad =
      "bad raft-peers member '" + std::string(word) + "': expected ID=HOST:RAFTPORT:CLIENTPORT";
  const std::size_t eq = word.find('=');
  const std::size_t c2 = word.rfind(':');
  const std::size_t c1 =
      c2 == std::string_view::npos || c2 == 0 ? std::string_view::npos : word.rfind(':', c2 - 1);
  if (eq == std::string_view::npos || c1 == std::string_view::npos || c1 <= eq + 1) return bad;
  std::uint64_t id = 0, raft_port = 0, client_port = 0;
  if (!ParseNumber(word.substr(0, eq), UINT64_MAX, &id) || id == 0) {
    return bad + " (ID: a positive integer)";
  }
  if (!ParseNumber(word.substr(c1 + 1, c2 - c1 - 1), 65535, &raft_port) || raft_port == 0 ||
      !ParseNumber(word.substr(c2 + 1), 65535, &client_port) || client_port == 0) {
    return bad + " (ports: 1 to 65535)";
  }
  p->id = id;
  p->host = std::string(word.substr(eq + 1, c1 - eq - 1));
  p->raft_port = static_cast<int>(raft_port);
  p->client_port = static_cast<int>(client_port);
  return std::nullopt;
}

}  // namespace

std::optional<std::string> ParsePeers(std::string_view text, std::vector<PeerSpec>* out) {
  std::vector<PeerSpec> peers;
  std::set<std::uint64_t> ids;
  std::set<std::string> raft_addrs, client_addrs;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && text[i] == ' ') ++i;
    std::size_t end = text.find(' ', i);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view word = text.substr(i, end - i);
    i = end;
    if (word.empty()) continue;
    PeerSpec p;
    if (auto reason = ParseMember(word, &p)) return reason;
    if (!ids.insert(p.id).second) return "duplicate raft-peers id " + std::to_string(p.id);
    const std::string raft = p.host + ":" + std::to_string(p.raft_port);
    const std::string client = p.host + ":" + std::to_string(p.client_port);
    if (!raft_addrs.insert(raft).second || client_addrs.count(raft) != 0) {
      return "duplicate raft-peers address " + raft;
    }
    if (!client_addrs.insert(client).second || raft_addrs.count(client) != 0) {
      return "duplicate raft-peers address " + client;
    }
    peers.push_back(std::move(p));
  }
  if (peers.empty()) return std::string("raft-peers lists no member");
  *out = std::move(peers);
  return std::nullopt;
}

}  // namespace latch::config
