#include "acl/acl_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "acl/registry.h"
#include "latch/protocol/split_args.h"
#include "server_state.h"

namespace latch::acl {
namespace {

// One user from its name and rules, or the reason a rule was refused.
std::optional<std::string> ParseUser(const CommandIndex& idx, const std::vector<std::string>& w,
                                     std::size_t first, std::vector<User>* users) {
  const std::string& name = w[first];
  for (const User& u : *users) {
    if (u.name == name) {
      return std::string("Duplicate user found. A user can only be defined once in config files");
    }
  }
  User u = NewUser(name, idx);
  for (std::size_t i = first + 1; i < w.size(); ++i) {
    if (std::optional<std::string_view> why = ApplyRule(u, w[i], idx)) {
      return "Error in user declaration '" + name + "': " + std::string(*why);
    }
  }
  users->push_back(std::move(u));
  return std::nullopt;
}

}  // namespace

std::optional<std::string> LoadAclFile(Registry& reg, const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return "Error loading ACLs, opening file '" + path + "': " + std::string(std::strerror(errno));
  }
  std::vector<User> users;
  std::string errors, line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> w;
    const std::string where = path + ":" + std::to_string(n) + ": ";
    if (!protocol::SplitArgs(line, &w)) {
      errors += where + "unbalanced quotes in acl line. ";
    } else if (w.empty()) {
      continue;
    } else if (w[0] != "user" || w.size() < 2) {
      errors += where + "should start with user keyword. ";
    } else if (std::optional<std::string> why = ParseUser(reg.index(), w, 1, &users)) {
      errors += where + *why + ". ";
    }
  }
  if (!errors.empty()) {
    errors.pop_back();
    return errors;
  }
  reg.ReplaceAll(std::move(users));
  return std::nullopt;
}

bool SaveAclFile(Registry& reg, const std::string& path) {
  std::string text;
  for (const auto& u : reg.Users()) {
    text += "user " + u->name + " " + DescribeUser(*u, reg.index()) + "\n";
  }
  const std::string tmp = path + ".tmp-latchd";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out || !(out << text) || !out.flush()) return false;
  }
  return std::rename(tmp.c_str(), path.c_str()) == 0;
}

void LoadUsersAtStartup(ServerState& state) {
  std::vector<std::string> lines;
  std::string aclfile;
  {
    std::lock_guard lock(state.options_mu);
    lines = state.options.acl_users;
    aclfile = state.options.aclfile;
  }
  Registry& reg = *state.acl;
  if (!lines.empty() && !aclfile.empty()) {
    throw std::runtime_error(
        "Configuring Redis with users defined in redis.conf and at the same setting an ACL file "
        "path is invalid. This setup is very likely to lead to configuration errors and security "
        "holes, please define either an ACL file or declare users directly in your redis.conf, "
        "but not both.");
  }
  if (!aclfile.empty()) {
    if (std::optional<std::string> why = LoadAclFile(reg, aclfile)) throw std::runtime_error(*why);
  } else if (!lines.empty()) {
    std::vector<User> users;
    for (const std::string& line : lines) {
      std::vector<std::string> w;
      if (!protocol::SplitArgs(line, &w) || w.empty()) {
        throw std::runtime_error("Error in user declaration '" + line + "'");
      }
      if (std::optional<std::string> why = ParseUser(reg.index(), w, 0, &users)) {
        throw std::runtime_error(*why);
      }
    }
    reg.ReplaceAll(std::move(users));
  }
  state.auth_required = reg.DefaultNeedsAuth();
}

void ApplyRequirepass(ServerState& state) {
  state.acl->SyncRequirepass(state.options.requirepass);
  state.auth_required = state.acl->DefaultNeedsAuth();
}

}  // namespace latch::acl
