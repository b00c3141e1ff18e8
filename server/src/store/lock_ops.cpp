#include "store/lock_ops.h"

#include "store/key_ops.h"

namespace latch::store {

std::uint64_t OpAcquire(LockTable& table, const KeyRef& k, std::string_view owner,
                        std::int64_t ttl_ms, const TimeSnapshot& now) {
  LockStats& stats = table.stats();
  if (k.shard->Find(k.key, k.hash, now.mono_ms) != nullptr ||
      table.GrantLeftover(k.key, k.hash) != nullptr) {
    stats.contended.fetch_add(1, std::memory_order_relaxed);
    return 0;
  }
  const std::uint64_t token = table.tokens().Next(now.wall_us);
  k.shard->Put(nullptr, k.key, k.hash, owner, Expiry::At(now.mono_ms + ttl_ms), token);
  stats.grants.fetch_add(1, std::memory_order_relaxed);
  return token;
}

OpStatus OpRelease(LockTable& table, const KeyRef& k, std::string_view owner,
                   const TimeSnapshot& now) {
  // A release is a compare-and-delete; the shard's key event hands the key on.
  return OpDelIf(k, ValueCond::kIfEq, owner, OpEnv{now, &table.stats()});
}

OpStatus OpExtend(LockTable& /*table*/, const KeyRef& k, std::string_view owner,
                  std::int64_t ttl_ms, const TimeSnapshot& now) {
  return OpExpireIfOwner(k, owner, now.mono_ms + ttl_ms, OpEnv{now, nullptr});
}

}  // namespace latch::store
