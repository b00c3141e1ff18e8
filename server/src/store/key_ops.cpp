#include "store/key_ops.h"

#include "store/lock_table.h"

namespace latch::store {

bool OpDel(const KeyRef& k, const OpEnv& env) {
  return k.shard->Delete(k.key, k.hash, env.now.mono_ms);
}

OpStatus OpExpire(const KeyRef& k, const ExpireParams& p, const OpEnv& env) {
  Object* o = k.shard->Find(k.key, k.hash, env.now.mono_ms);
  if (o == nullptr) return OpStatus::kNoKey;
  const bool has = o->has_expire();
  const std::int64_t cur = o->expire_at();
  const std::int64_t want = p.deadline_ms;
  if (((p.flags & ExpireParams::kNx) && has) || ((p.flags & ExpireParams::kXx) && !has) ||
      ((p.flags & ExpireParams::kGt) && (!has || want <= cur)) ||
      ((p.flags & ExpireParams::kLt) && has && want >= cur)) {
    return OpStatus::kNotMet;
  }
  if (want <= env.now.mono_ms) {  // Redis: checkAlreadyExpired -> the key is deleted
    k.shard->Erase(o, k.hash);
  } else {
    k.shard->SetDeadline(o, k.hash, want);
  }
  return OpStatus::kOk;
}

OpStatus OpPersist(const KeyRef& k, const OpEnv& env) {
  Object* o = k.shard->Find(k.key, k.hash, env.now.mono_ms);
  if (o == nullptr) return OpStatus::kNoKey;
  if (!o->has_expire()) return OpStatus::kNotMet;
  k.shard->SetDeadline(o, k.hash, 0);
  return OpStatus::kOk;
}

OpStatus OpDelIf(const KeyRef& k, ValueCond cond, std::string_view arg, const OpEnv& env) {
  // Peek, touched below only when the key stays: a deleted key has no idle time to keep
  // (the release of a lock, the common case, skips the access clock).
  HandleTable::Slot* slot;
  Object* o = k.shard->PeekSlot(k.key, k.hash, env.now.mono_ms, &slot);
  if (o == nullptr) return OpStatus::kNoKey;
  if (cond != ValueCond::kNone && o->is_container()) {
    k.shard->Touch(o);
    return OpStatus::kWrongType;
  }
  switch (CheckValueCond(cond, arg, o->value())) {
    case CondResult::kBadDigest:
      k.shard->Touch(o);
      return OpStatus::kBadDigest;
    case CondResult::kNotMet:
      k.shard->Touch(o);
      // The compare-and-delete release of the Redis lock idiom, by someone else.
      if (cond == ValueCond::kIfEq && env.lock_stats != nullptr) {
        env.lock_stats->non_owner_releases.fetch_add(1, std::memory_order_relaxed);
      }
      return OpStatus::kNotMet;
    case CondResult::kMet:
      break;
  }
  k.shard->EraseFound(slot, o, k.hash);  // nothing changed the shard since the lookup
  return OpStatus::kOk;
}

OpStatus OpExpireIfOwner(const KeyRef& k, std::string_view owner, std::int64_t deadline_ms,
                         const OpEnv& env) {
  Object* o = k.shard->Find(k.key, k.hash, env.now.mono_ms);
  if (o == nullptr) return OpStatus::kNoKey;
  if (o->is_container() || o->value() != owner) return OpStatus::kNotMet;
  k.shard->SetDeadline(o, k.hash, deadline_ms);
  return OpStatus::kOk;
}

}  // namespace latch::store
