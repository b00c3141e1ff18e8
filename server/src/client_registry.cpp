#include "client_registry.h"

namespace latch {

std::shared_ptr<ClientInfo> ClientRegistry::Add(int maxclients) {
  std::size_t n = count_.fetch_add(1) + 1;
  if (n > static_cast<std::size_t>(maxclients)) {
    count_.fetch_sub(1);
    return nullptr;
  }
  auto info = std::make_shared<ClientInfo>();
  info->id = next_id_.fetch_add(1);
  std::lock_guard lock(mu);
  clients_.emplace(info->id, info);
  return info;
}

void ClientRegistry::Remove(std::int64_t id) {
  std::lock_guard lock(mu);
  if (clients_.erase(id) != 0) count_.fetch_sub(1);
}

}  // namespace latch
