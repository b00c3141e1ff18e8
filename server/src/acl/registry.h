#pragma once
// The server's ACL users (Redis 7.0's rax of users): a map of immutable User snapshots under
// a reader-writer lock. Every change publishes new snapshots and bumps `generation`; a
// session re-reads its user only when the generation moved, so the dispatcher's check of an
// unrestricted user is one relaxed load and a compare.
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "acl/acl_log.h"
#include "acl/command_index.h"
#include "acl/user.h"
#include "metrics/acl_counters.h"

namespace latch {
class CommandCatalogue;
}  // namespace latch

namespace latch::acl {

class Registry : public AclDenialCounters {
 public:
  // `commands` is ServerState::commands: read on first use, once the table exists.
  explicit Registry(const CommandCatalogue* const& commands) : commands_(commands) {}

  std::uint64_t generation() const { return generation_.load(std::memory_order_relaxed); }
  // False while ServerState has no command table (unit tests that build state by hand):
  // no user but the default can exist then, and every command is allowed.
  bool attached() const { return commands_ != nullptr; }
  const CommandIndex& index() const;

  std::shared_ptr<const User> Find(std::string_view name) const;
  // AUTH / HELLO AUTH: the user when it exists, is on and the password matches.
  std::shared_ptr<const User> Authenticate(std::string_view name, std::string_view pass) const;
  // ACL SETUSER: applies `rules` to a copy of the user (a new one when absent) and publishes
  // it only when every rule was accepted. Returns Redis's error text otherwise.
  std::optional<std::string> SetUser(std::string_view name,
                                     std::span<const std::string_view> rules);
  // ACL DELUSER: how many existed. The caller refuses "default".
  int DelUsers(std::span<const std::string_view> names);
  // Name order (Redis's rax order).
  std::vector<std::shared_ptr<const User>> Users() const;
  // ACL LOAD: replaces every user at once; a file without "default" keeps the current one.
  void ReplaceAll(std::vector<User> users);

  // requirepass is the default user's password (Redis: resetpass, then >pass or nopass).
  // Applied only when it changed since the last call, so CONFIG SET of other options does
  // not undo an ACL SETUSER default.
  void SyncRequirepass(const std::string& pass);
  // A new connection must AUTH: the default user is off or has passwords.
  bool DefaultNeedsAuth() const;

  AclLog& log() { return log_; }

 private:
  void EnsureDefault() const;  // under the exclusive lock, after the index exists
  void Publish(User u);        // under the exclusive lock

  const CommandCatalogue* const& commands_;
  mutable std::once_flag index_once_;
  mutable std::unique_ptr<CommandIndex> index_;
  mutable std::shared_mutex mu_;
  mutable std::map<std::string, std::shared_ptr<const User>, std::less<>> users_;
  std::atomic<std::uint64_t> generation_{1};
  std::optional<std::string> requirepass_;  // the last value applied
  AclLog log_;
};

}  // namespace latch::acl
