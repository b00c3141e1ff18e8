#include "store/key_move_ops.h"

#include <memory>
#include <string>

namespace latch::store {
namespace {

// The expiry a destination takes from its source.
Expiry ExpiryOf(const Object* o) {
  return o->has_expire() ? Expiry::At(o->expire_at()) : Expiry::Clear();
}

}  // namespace

OpStatus OpRename(const KeyRef& src, const KeyRef& dst, bool nx, const OpEnv& env) {
  Object* from = src.shard->Find(src.key, src.hash, env.now.mono_ms);
  if (from == nullptr) return OpStatus::kNoKey;
  // The same key of the same database (MOVE's keys have the same name in two databases).
  if (src.shard == dst.shard && src.key == dst.key) return nx ? OpStatus::kNotMet : OpStatus::kOk;
  Object* to = dst.shard->Find(dst.key, dst.hash, env.now.mono_ms);
  if (nx && to != nullptr) return OpStatus::kNotMet;
  const Expiry expiry = ExpiryOf(from);
  if (from->is_container()) {
    dst.shard->PutContainer(to, dst.key, dst.hash, src.shard->TakeContainer(from), expiry);
  } else {
    // The value is copied out first: both keys may share a shard whose Put moves blocks.
    const std::string value(from->value());
    dst.shard->Put(to, dst.key, dst.hash, value, expiry, from->token());
  }
  // The destination's write may have granted nothing on the source's shard, but the source
  // object is found again in case a block moved.
  if (Object* again = src.shard->Find(src.key, src.hash, env.now.mono_ms)) {
    src.shard->Erase(again, src.hash);
  }
  return OpStatus::kOk;
}

OpStatus OpCopy(const KeyRef& src, const KeyRef& dst, bool replace, const OpEnv& env) {
  Object* from = src.shard->Find(src.key, src.hash, env.now.mono_ms);
  if (from == nullptr) return OpStatus::kNoKey;
  Object* to = dst.shard->Find(dst.key, dst.hash, env.now.mono_ms);
  if (to != nullptr && !replace) return OpStatus::kNotMet;
  const Expiry expiry = ExpiryOf(from);
  if (from->is_container()) {
    dst.shard->PutContainer(to, dst.key, dst.hash, from->container()->Clone(), expiry);
  } else {
    const std::string value(from->value());
    dst.shard->Put(to, dst.key, dst.hash, value, expiry);
  }
  return OpStatus::kOk;
}

}  // namespace latch::store
