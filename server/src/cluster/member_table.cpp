#include "cluster/member_table.h"

#include <charconv>
#include <utility>

#include "cluster/little_endian.h"

namespace latch::cluster {
namespace {

std::string MemberEntry(std::string_view line) {
  std::string out;
  AppendLeU64(&out, kMemberEntryNonce);
  out += kMemberEntryMagic;
  out += line;
  return out;
}

// The next space-separated word of `s`, consumed.
std::string_view MemberTableWord(std::string_view* s) {
  const std::size_t start = s->find_first_not_of(' ');
  if (start == std::string_view::npos) {
    *s = {};
    return {};
  }
  s->remove_prefix(start);
  const std::size_t end = s->find(' ');
  const std::string_view w = s->substr(0, end);
  s->remove_prefix(end == std::string_view::npos ? s->size() : end);
  return w;
}

template <class T>
bool MemberTableNumber(std::string_view w, T* v) {
  auto [end, ec] = std::from_chars(w.data(), w.data() + w.size(), *v);
  return !w.empty() && ec == std::errc() && end == w.data() + w.size();
}

// One line (without its newline) applied to `m`.
bool MemberTableLine(std::string_view line, MemberTable::Map* m, std::string* error) {
  const std::string_view verb = MemberTableWord(&line);
  if (verb != "set" && verb != "forget") return true;  // a later version's change
  std::uint64_t id = 0;
  if (!MemberTableNumber(MemberTableWord(&line), &id) || id == 0) {
    *error = "member change without a node id";
    return false;
  }
  if (verb == "forget") {
    m->erase(id);
    return true;
  }
  ClientAddress a;
  a.host = std::string(MemberTableWord(&line));
  if (a.host.empty() || !MemberTableNumber(MemberTableWord(&line), &a.port) || a.port <= 0 ||
      a.port > 65535) {
    *error = "member " + std::to_string(id) + " without a client address";
    return false;
  }
  if (const std::string_view rest = MemberTableWord(&line); !rest.empty()) {
    if (!MemberTableNumber(rest, &a.rest_port) || a.rest_port < 0 || a.rest_port > 65535) {
      *error = "member " + std::to_string(id) + " with a bad REST port";
      return false;
    }
  }
  (*m)[id] = std::move(a);
  return true;
}

}  // namespace

MemberTable::Map MemberTable::Copy() const {
  std::lock_guard lock(mu_);
  return map_;
}

void MemberTable::Replace(Map m) {
  std::lock_guard lock(mu_);
  map_ = std::move(m);
}

bool MemberTable::ApplyLines(std::string_view lines, std::string* error) {
  Map next = Copy();  // only the Raft thread writes: nothing changes it meanwhile
  if (!ParseMemberLines(lines, &next, error)) return false;
  Replace(std::move(next));
  return true;
}

namespace {

std::string MemberTableSetLine(std::uint64_t id, const ClientAddress& a) {
  std::string line = "set " + std::to_string(id) + " " + a.host + " " + std::to_string(a.port);
  if (a.rest_port != 0) line += " " + std::to_string(a.rest_port);
  return line + "\n";
}

}  // namespace

std::string EncodeMemberSet(std::uint64_t id, const ClientAddress& a) {
  return MemberEntry(MemberTableSetLine(id, a));
}

std::string EncodeMemberForget(std::uint64_t id) {
  return MemberEntry("forget " + std::to_string(id) + "\n");
}

std::string EncodeMemberSection(const MemberTable::Map& m) {
  std::string out;
  for (const auto& [id, a] : m) out += MemberTableSetLine(id, a);
  return out;
}

bool MemberEntryLines(std::string_view after_nonce, std::string_view* lines) {
  if (!after_nonce.starts_with(kMemberEntryMagic)) return false;
  *lines = after_nonce.substr(kMemberEntryMagic.size());
  return true;
}

bool ParseMemberLines(std::string_view lines, MemberTable::Map* m, std::string* error) {
  while (!lines.empty()) {
    const std::size_t nl = lines.find('\n');
    const std::string_view line = lines.substr(0, nl);
    if (!MemberTableLine(line, m, error)) return false;
    lines.remove_prefix(nl == std::string_view::npos ? lines.size() : nl + 1);
  }
  return true;
}

std::vector<KnownMember> JoinMembers(const RaftConfig& config,
                                     const std::vector<RaftMember>& current,
                                     const MemberTable::Map& table) {
  std::vector<KnownMember> out;
  if (current.empty()) {
    for (const RaftConfig::Member& m : config.members) {
      out.push_back(KnownMember{m.id, {m.client_host, m.client_port, 0}});
    }
    return out;
  }
  for (const RaftMember& m : current) {
    if (m.role == RaftMember::Role::kSpare) continue;
    if (auto it = table.find(m.id); it != table.end()) {
      out.push_back(KnownMember{m.id, it->second});
      continue;
    }
    for (const RaftConfig::Member& founding : config.members) {
      if (founding.id != m.id) continue;
      out.push_back(KnownMember{m.id, {founding.client_host, founding.client_port, 0}});
      break;
    }
  }
  return out;
}

}  // namespace latch::cluster
