#include "store/object.h"

#include <cstring>
#include <new>

namespace latch::store {

Object* Object::Construct(void* mem, std::string_view key, std::string_view value,
                          std::uint64_t token) {
  Object* o = new (mem) Object();
  o->key_len_ = static_cast<std::uint32_t>(key.size()) | (token != 0 ? kTokenFlag : 0);
  o->val_len_ = static_cast<std::uint32_t>(value.size());
  if (token != 0) std::memcpy(reinterpret_cast<char*>(o + 1), &token, sizeof(token));
  if (!key.empty()) std::memcpy(o->bytes(), key.data(), key.size());
  if (!value.empty()) std::memcpy(o->bytes() + key.size(), value.data(), value.size());
  return o;
}

std::uint64_t Object::token() const {
  std::uint64_t token = 0;
  if (has_token()) std::memcpy(&token, reinterpret_cast<const char*>(this + 1), sizeof(token));
  return token;
}

void Object::SetValue(std::string_view value) {
  // memmove: the new value may be a view into the old one.
  if (!value.empty()) std::memmove(bytes() + key_size(), value.data(), value.size());
  val_len_ = static_cast<std::uint32_t>(value.size());
}

}  // namespace latch::store
