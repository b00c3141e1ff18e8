#include "store/object.h"

#include <malloc.h>

#include <cstdlib>
#include <cstring>
#include <new>

namespace latch::store {

Object* Object::Create(std::string_view key, std::string_view value) {
  void* mem = std::malloc(sizeof(Object) + key.size() + value.size());
  if (mem == nullptr) throw std::bad_alloc();
  Object* o = new (mem) Object();
  o->key_len_ = static_cast<std::uint32_t>(key.size());
  o->val_len_ = static_cast<std::uint32_t>(value.size());
  if (!key.empty()) std::memcpy(o->bytes(), key.data(), key.size());
  if (!value.empty()) std::memcpy(o->bytes() + key.size(), value.data(), value.size());
  return o;
}

void Object::Destroy(Object* o) {
  o->~Object();
  std::free(o);
}

std::size_t Object::value_capacity() const {
  return malloc_usable_size(const_cast<Object*>(this)) - sizeof(Object) - key_len_;
}

std::size_t Object::allocated_bytes() const {
  return malloc_usable_size(const_cast<Object*>(this));
}

Object* Object::Assign(Object* o, std::string_view value) {
  if (value.size() <= o->value_capacity()) {
    std::memmove(o->bytes() + o->key_len_, value.data(), value.size());
    o->val_len_ = static_cast<std::uint32_t>(value.size());
    return o;
  }
  Object* n = Create(o->key(), value);
  n->deadline = o->deadline;
  return n;
}

}  // namespace latch::store
