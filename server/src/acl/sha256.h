#pragma once
// SHA-256 as lowercase hex: how ACL users store passwords (Redis keeps the same digest, so an
// aclfile's `#<hash>` moves between redis-server and latchd unchanged).
#include <string>
#include <string_view>

namespace latch::acl {

std::string Sha256Hex(std::string_view data);

}  // namespace latch::acl
