#include "store/object.h"

#include <cstring>
#include <new>

namespace latch::store {

Object* Object::Construct(void* mem, std::string_view key, std::string_view value,
                          std::uint64_t token, std::uint32_t clock) {
  Object* o = new (mem) Object();
  o->deadline = static_cast<std::int64_t>(std::uint64_t{clock & kClockMask} << kClockShift);
  o->key_len_ = static_cast<std::uint32_t>(key.size()) | (token != 0 ? kTokenFlag : 0);
  o->val_len_ = static_cast<std::uint32_t>(value.size());
  if (token != 0) std::memcpy(reinterpret_cast<char*>(o + 1), &token, sizeof(token));
  if (!key.empty()) std::memcpy(o->bytes(), key.data(), key.size());
  if (!value.empty()) std::memcpy(o->bytes() + key.size(), value.data(), value.size());
  return o;
}

void Object::set_deadline(std::int64_t deadline_ms) {
  if (far_deadline()) prev = next = 0;  // the links held the old deadline
  std::uint64_t bits = 0;
  if (deadline_ms > kMaxPackedDeadline) {
    bits = kDeadlineMask;
    const auto whole = static_cast<std::uint64_t>(deadline_ms);
    prev = static_cast<std::uint32_t>(whole);
    next = static_cast<std::uint32_t>(whole >> 32);
  } else if (deadline_ms != 0) {
    bits = static_cast<std::uint64_t>(deadline_ms < 1 ? 1 : deadline_ms);
  }
  StoreWord((Word() & ~kDeadlineMask) | bits);
}

void Object::SetValue(std::string_view value) {
  // memmove: the new value may be a view into the old one.
  if (!value.empty()) std::memmove(bytes() + key_size(), value.data(), value.size());
  val_len_ = static_cast<std::uint32_t>(value.size());
}

}  // namespace latch::store
