#include "store/bit_ops.h"

#include <string>

namespace latch::store {

OpStatus OpSetBit(const KeyRef& k, std::uint64_t bit, bool on, const OpEnv& env, int* old) {
  Object* o = k.shard->Find(k.key, k.hash, env.now.mono_ms);
  if (o != nullptr && o->is_container()) return OpStatus::kWrongType;
  std::string next(o != nullptr ? o->value() : std::string_view());
  const std::size_t byte = bit >> 3;
  const auto mask = static_cast<unsigned char>(1u << (7 - (bit & 7)));
  if (next.size() <= byte) next.resize(byte + 1, '\0');
  auto& c = reinterpret_cast<unsigned char&>(next[byte]);
  *old = (c & mask) != 0 ? 1 : 0;
  c = static_cast<unsigned char>(on ? (c | mask) : (c & ~mask));
  // As Redis, the value is written back (and the key event reported) even when the bit
  // did not change.
  k.shard->Put(o, k.key, k.hash, next, o != nullptr ? Expiry::Keep() : Expiry::Clear());
  return OpStatus::kOk;
}

}  // namespace latch::store
