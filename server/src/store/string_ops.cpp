#include "store/string_ops.h"


#include "latch/protocol/int_parse.h"
#include "store/int_increment.h"
#include "store/lock_table.h"

namespace latch::store {
namespace {

// Whether SET's condition lets the write happen (kOk), or why not.
OpStatus CheckSetCond(const SetParams& p, const Object* o, const OpEnv& env) {
  switch (p.cond) {
    case SetParams::Cond::kNone:
      return OpStatus::kOk;
    case SetParams::Cond::kNx:
      return o == nullptr && !env.grants_held ? OpStatus::kOk : OpStatus::kNotMet;
    case SetParams::Cond::kXx:
      return o != nullptr ? OpStatus::kOk : OpStatus::kNotMet;
    case SetParams::Cond::kValue:
      break;
  }
  if (o == nullptr) {
    // IFEQ/IFDEQ never create the key; IFNE/IFDNE do (nothing differs from a missing key).
    // A creation that depends on the key's absence is a grant: held back by lock-restart-delay.
    const bool creates = p.value_cond == ValueCond::kIfNe || p.value_cond == ValueCond::kIfDne;
    return creates && !env.grants_held ? OpStatus::kOk : OpStatus::kNotMet;
  }
  switch (CheckValueCond(p.value_cond, p.cond_arg, o->value())) {
    case CondResult::kMet:
      return OpStatus::kOk;
    case CondResult::kNotMet:
      return OpStatus::kNotMet;
    case CondResult::kBadDigest:
      return OpStatus::kBadDigest;
  }
  return OpStatus::kNotMet;
}

}  // namespace

bool OpMSet(std::span<const KeyRef> keys, std::span<const std::string_view> key_value_pairs,
            bool nx, const OpEnv& env) {
  if (nx) {
    if (env.grants_held) return false;  // MSETNX creates keys only if none exists: a grant
    for (const KeyRef& k : keys) {
      if (k.shard->Find(k.key, k.hash, env.now.mono_ms) != nullptr) return false;
    }
  }
  const SetParams plain;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    OpSet(keys[i], key_value_pairs[2 * i + 1], plain, env, nullptr);
  }
  return true;
}

OpStatus OpSet(const KeyRef& k, std::string_view value, const SetParams& p, const OpEnv& env,
               SetResult* result) {
  Object* o = k.shard->Find(k.key, k.hash, env.now.mono_ms);
  // SET overwrites any type, but GET and the value conditions read a string.
  if (o != nullptr && o->is_container() && (p.get || p.cond == SetParams::Cond::kValue)) {
    return OpStatus::kWrongType;
  }
  const OpStatus status = CheckSetCond(p, o, env);
  if (status == OpStatus::kBadDigest) return status;
  if (p.get && result != nullptr) {
    result->had_old = o != nullptr;
    if (o != nullptr) result->old.assign(o->value());
  }
  // SET key owner NX PX ttl: the Redis lock idiom, counted with LOCK.ACQUIRE's grants.
  if (p.cond == SetParams::Cond::kNx && p.expiry.mode == Expiry::Mode::kSet &&
      env.lock_stats != nullptr) {
    (status == OpStatus::kOk ? env.lock_stats->grants : env.lock_stats->contended)
        .fetch_add(1, std::memory_order_relaxed);
  }
  if (status != OpStatus::kOk) return status;
  k.shard->Put(o, k.key, k.hash, value, p.expiry);
  return OpStatus::kOk;
}

OpStatus OpIncrBy(const KeyRef& k, std::int64_t delta, const OpEnv& env, std::int64_t* out) {
  Object* o = k.shard->Find(k.key, k.hash, env.now.mono_ms);
  std::int64_t cur = 0;
  if (o != nullptr && o->is_container()) return OpStatus::kWrongType;
  if (o != nullptr && !ParseInt64(o->value(), &cur)) return OpStatus::kNotInteger;
  if (!AddWithoutOverflow(cur, delta, out)) return OpStatus::kOverflow;
  k.shard->Put(o, k.key, k.hash, Int64Text(*out).view(), Expiry::Keep());
  return OpStatus::kOk;
}

bool OpGetDel(const KeyRef& k, const OpEnv& env, std::string* value) {
  Object* o = k.shard->Find(k.key, k.hash, env.now.mono_ms);
  if (o == nullptr) return false;
  value->assign(o->value());
  k.shard->Erase(o, k.hash);
  return true;
}

}  // namespace latch::store
