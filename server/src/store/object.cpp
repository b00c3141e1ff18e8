#include "store/object.h"

#include <malloc.h>

#include <cstdlib>
#include <cstring>
#include <new>

namespace latch::store {

Object* Object::Create(std::string_view key, std::string_view value, std::uint64_t token) {
  const std::size_t token_size = token != 0 ? sizeof(token) : 0;
  void* mem = std::malloc(sizeof(Object) + token_size + key.size() + value.size());
  if (mem == nullptr) throw std::bad_alloc();
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

void Object::Destroy(Object* o) {
  o->~Object();
  std::free(o);
}

std::size_t Object::value_capacity() const {
  return malloc_usable_size(const_cast<Object*>(this)) - sizeof(Object) - token_size() -
         key_size();
}

std::size_t Object::allocated_bytes() const {
  return malloc_usable_size(const_cast<Object*>(this));
}

Object* Object::Assign(Object* o, std::string_view value) {
  if (value.size() <= o->value_capacity()) {
    std::memmove(o->bytes() + o->key_size(), value.data(), value.size());
    o->val_len_ = static_cast<std::uint32_t>(value.size());
    return o;
  }
  Object* n = Create(o->key(), value, o->token());
  n->deadline = o->deadline;
  return n;
}

}  // namespace latch::store
