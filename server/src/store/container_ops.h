#pragma once
// What the hash and sorted-set Ops share: finding a key's container of the expected type,
// and reporting a change made in place (an emptied container deletes its key, as in Redis).
// The caller holds the key's shard lock.
#include "store/op_env.h"
#include "store/shard.h"

namespace latch::store {

// kOk with *o and *c set (both null when the key is missing), or kWrongType.
template <class T>
OpStatus FindContainer(const KeyRef& k, const OpEnv& env, Object** o, T** c) {
  *o = k.shard->Find(k.key, k.hash, env.now.mono_ms);
  *c = nullptr;
  if (*o == nullptr) return OpStatus::kOk;
  if (!(*o)->is_container() || (*o)->container()->type() != T::kType) {
    return OpStatus::kWrongType;
  }
  *c = static_cast<T*>((*o)->container());
  return OpStatus::kOk;
}

// After an in-place change of o's container: the key event, or the key's deletion when the
// container is now empty.
template <class T>
void AfterChange(const KeyRef& k, Object* o, const T& c) {
  if (c.size() == 0) {
    k.shard->Erase(o, k.hash);
  } else {
    k.shard->Changed(o, k.hash);
  }
}

}  // namespace latch::store
