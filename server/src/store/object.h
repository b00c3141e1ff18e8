#pragma once
// One key and its string value in a single heap block, so that a lock costs one allocation.
// The block's address is stable for its life: the shard's hash set holds the pointer and
// the timer wheel links the embedded TimerNode, so neither needs a copy of the key.
//
// Layout: [TimerNode: prev next deadline][key_len][val_len][key bytes][value bytes]
// The value's capacity is whatever the allocator actually gave (malloc_usable_size), so
// rewriting a value of similar size (SET over SET, INCR) does not reallocate.
#include <cstdint>
#include <string_view>

#include "store/timer_wheel.h"

namespace latch::store {

class Object : public TimerNode {
 public:
  // Allocates a block for key and value. Never returns nullptr (aborts on OOM like new).
  static Object* Create(std::string_view key, std::string_view value);
  static void Destroy(Object* o);
  // Replaces the value, reallocating only when it does not fit; returns the (possibly new)
  // object. A moved object is NOT scheduled on any wheel: the caller re-links it.
  static Object* Assign(Object* o, std::string_view value);

  std::string_view key() const { return {bytes(), key_len_}; }
  std::string_view value() const { return {bytes() + key_len_, val_len_}; }
  // Monotonic deadline in ms, 0 when the key does not expire.
  std::int64_t expire_at() const { return deadline; }
  bool has_expire() const { return deadline != 0; }
  bool expired(std::int64_t now_ms) const { return deadline != 0 && deadline <= now_ms; }
  // Bytes this object occupies on the heap (for INFO memory and the benchmark).
  std::size_t allocated_bytes() const;

 private:
  Object() = default;
  const char* bytes() const { return reinterpret_cast<const char*>(this + 1); }
  char* bytes() { return reinterpret_cast<char*>(this + 1); }
  std::size_t value_capacity() const;

  std::uint32_t key_len_ = 0;
  std::uint32_t val_len_ = 0;
};

}  // namespace latch::store
