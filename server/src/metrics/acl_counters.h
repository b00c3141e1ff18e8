#pragma once
// ACL's refusals, counted for INFO (acl_access_denied_*) and /metrics; RESETSTAT zeroes them.
// Defined here so that the stats registry reads them without knowing ACL: acl::Registry is
// one (acl/registry.h) and ServerState::acl_denials points at it.
#include <atomic>
#include <cstdint>

namespace latch {

struct AclDenialCounters {
  std::atomic<std::uint64_t> denied_auth{0}, denied_cmd{0}, denied_key{0}, denied_channel{0};
};

}  // namespace latch
