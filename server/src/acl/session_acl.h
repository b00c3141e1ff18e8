#pragma once
// A connection's ACL identity: the user's name and the snapshot of its rules, re-read when
// the registry's generation moves (any ACL change). Owned by the Session; worker thread only.
#include <cstdint>
#include <memory>
#include <string>

namespace latch::acl {

struct User;

struct SessionAcl {
  std::string name = "default";
  std::shared_ptr<const User> user;  // null until the first check, or once the user is gone
  std::uint64_t generation = 0;      // the registry starts at 1: the first check refreshes
  bool unrestricted = false;         // the snapshot's User::unrestricted
};

}  // namespace latch::acl
