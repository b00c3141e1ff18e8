#include "acl/registry.h"

#include "catalogue/command_catalogue.h"
#include "latch/protocol/error_arg.h"

namespace latch::acl {

const CommandIndex& Registry::index() const {
  std::call_once(index_once_, [this] {
    index_ = std::make_unique<CommandIndex>(*commands_);
    std::unique_lock lock(mu_);
    EnsureDefault();
  });
  return *index_;
}

// Redis's default user: +@all ~* &* on nopass, then requirepass when one is set.
void Registry::EnsureDefault() const {
  if (users_.count("default")) return;
  User u = NewUser("default", *index_);
  for (std::string_view r : {"+@all", "~*", "&*", "on", "nopass"}) ApplyRule(u, r, *index_);
  if (requirepass_ && !requirepass_->empty()) {
    ApplyRule(u, "resetpass", *index_);
    ApplyRule(u, ">" + *requirepass_, *index_);
  }
  users_["default"] = std::make_shared<const User>(std::move(u));
}

void Registry::Publish(User u) {
  u.Refresh();
  std::string name = u.name;
  users_[name] = std::make_shared<const User>(std::move(u));
  generation_.fetch_add(1, std::memory_order_relaxed);
}

std::shared_ptr<const User> Registry::Find(std::string_view name) const {
  index();
  std::shared_lock lock(mu_);
  auto it = users_.find(name);
  return it == users_.end() ? nullptr : it->second;
}

std::shared_ptr<const User> Registry::Authenticate(std::string_view name,
                                                   std::string_view pass) const {
  std::shared_ptr<const User> u = Find(name);
  if (u == nullptr || !u->enabled) return nullptr;
  if (u->nopass || PasswordMatches(*u, pass)) return u;
  return nullptr;
}

std::optional<std::string> Registry::SetUser(std::string_view name,
                                             std::span<const std::string_view> rules) {
  const CommandIndex& idx = index();
  for (char c : name) {
    if (c == ' ' || c == '\0' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f') {
      return std::string("ERR Usernames can't contain spaces or null characters");
    }
  }
  std::unique_lock lock(mu_);
  auto it = users_.find(name);
  User u = it == users_.end() ? NewUser(std::string(name), idx) : *it->second;
  for (std::string_view rule : rules) {
    if (std::optional<std::string_view> why = ApplyRule(u, rule, idx)) {
      return "ERR Error in ACL SETUSER modifier '" + std::string(protocol::ErrorArg(rule)) +
             "': " + std::string(*why);
    }
  }
  Publish(std::move(u));
  return std::nullopt;
}

int Registry::DelUsers(std::span<const std::string_view> names) {
  index();
  std::unique_lock lock(mu_);
  int deleted = 0;
  for (std::string_view name : names) {
    auto it = users_.find(name);
    if (it == users_.end()) continue;
    users_.erase(it);
    ++deleted;
  }
  generation_.fetch_add(1, std::memory_order_relaxed);
  return deleted;
}

std::vector<std::shared_ptr<const User>> Registry::Users() const {
  index();
  std::shared_lock lock(mu_);
  std::vector<std::shared_ptr<const User>> out;
  for (const auto& [name, u] : users_) out.push_back(u);
  return out;
}

void Registry::ReplaceAll(std::vector<User> users) {
  index();
  std::unique_lock lock(mu_);
  std::shared_ptr<const User> old_default = users_["default"];
  users_.clear();
  for (User& u : users) {
    u.Refresh();
    std::string name = u.name;
    users_[name] = std::make_shared<const User>(std::move(u));
  }
  if (!users_.count("default")) users_["default"] = old_default;
  generation_.fetch_add(1, std::memory_order_relaxed);
}

void Registry::SyncRequirepass(const std::string& pass) {
  if (commands_ == nullptr) {  // ServerState's constructor, before the table exists
    requirepass_ = pass;
    return;
  }
  const CommandIndex& idx = index();
  std::unique_lock lock(mu_);
  if (requirepass_ == pass) return;
  requirepass_ = pass;
  User u = *users_["default"];
  ApplyRule(u, "resetpass", idx);
  ApplyRule(u, pass.empty() ? std::string("nopass") : ">" + pass, idx);
  Publish(std::move(u));
}

bool Registry::DefaultNeedsAuth() const {
  if (commands_ == nullptr) return requirepass_ && !requirepass_->empty();
  index();
  std::shared_lock lock(mu_);
  auto it = users_.find("default");
  return it == users_.end() || !it->second->nopass || !it->second->enabled;
}

}  // namespace latch::acl
