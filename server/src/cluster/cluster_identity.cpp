#include "cluster/cluster_identity.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <system_error>
#include <vector>

namespace latch::cluster {
namespace {

constexpr std::string_view kMembershipKey = "first-membership";

// The first membership as the file spells it: "ID=a.b.c.d:port ...", ordered by id. A joining
// node's own entry is not part of it (it was added at run time).
std::string FirstMembership(const RaftConfig& config) {
  std::map<std::uint64_t, std::string> members;
  for (const auto& m : config.members) {
    if (config.join && m.id == config.id) continue;
    members[m.id] = m.raft_address;
  }
  std::string out;
  for (const auto& [id, address] : members) {
    if (!out.empty()) out += ' ';
    out += std::to_string(id) + "=" + address;
  }
  return out;
}

// The stored membership's members, or nullopt when the file is unreadable or malformed.
std::optional<std::map<std::uint64_t, std::string>> ReadIdentity(const std::filesystem::path& file,
                                                                 std::string* line_out) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.starts_with(kMembershipKey) || line.size() <= kMembershipKey.size() ||
        line[kMembershipKey.size()] != ' ') {
      continue;
    }
    *line_out = line.substr(kMembershipKey.size() + 1);
    std::map<std::uint64_t, std::string> members;
    std::istringstream words(*line_out);
    std::string word;
    while (words >> word) {
      const std::size_t eq = word.find('=');
      if (eq == 0 || eq == std::string::npos) return std::nullopt;
      try {
        members[std::stoull(word.substr(0, eq))] = word.substr(eq + 1);
      } catch (const std::exception&) {
        return std::nullopt;
      }
    }
    if (members.empty()) return std::nullopt;
    return members;
  }
  return std::nullopt;
}

std::optional<std::string> WriteIdentity(const std::filesystem::path& dir,
                                         const std::string& membership) {
  const std::filesystem::path file = dir / kClusterIdentityFile;
  const std::filesystem::path tmp = dir / (std::string(kClusterIdentityFile) + ".tmp");
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << "# latch: the cluster this Raft log belongs to (docs/CLUSTER.md). A node whose\n"
           "# raft-peers does not list these members refuses to start on this directory.\n"
        << kMembershipKey << ' ' << membership << '\n';
    if (!out.flush()) return "Can't write " + tmp.string();
  }
  std::error_code ec;
  std::filesystem::rename(tmp, file, ec);
  if (ec) return "Can't write " + file.string() + ": " + ec.message();
  return std::nullopt;
}

}  // namespace

std::optional<std::string> CheckClusterIdentity(const RaftConfig& config) {
  const std::filesystem::path dir = config.dir;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return "Can't create raft-dir '" + config.dir + "': " + ec.message();
  const std::filesystem::path file = dir / kClusterIdentityFile;
  const std::string ours = FirstMembership(config);
  if (!std::filesystem::exists(file, ec)) return WriteIdentity(dir, ours);
  std::string stored_line;
  const auto stored = ReadIdentity(file, &stored_line);
  if (!stored) {
    return "raft-dir '" + config.dir + "': " + file.string() +
           " is unreadable; refusing to start on a Raft log of unknown origin";
  }
  std::map<std::uint64_t, std::string> listed;
  for (const auto& m : config.members) listed[m.id] = m.raft_address;
  for (const auto& [id, address] : *stored) {
    const auto it = listed.find(id);
    if (it == listed.end() || it->second != address) {
      return "raft-dir '" + config.dir + "' belongs to another cluster: its first membership is '" +
             stored_line + "', and raft-peers does not list node " + std::to_string(id) + "=" +
             address + " (raft-peers: '" + ours +
             "'). Point raft-dir at this node's own directory (an empty one to join as a new "
             "node); nothing was changed";
    }
  }
  return std::nullopt;
}

}  // namespace latch::cluster
