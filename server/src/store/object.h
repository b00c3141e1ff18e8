#pragma once
// One key and its string value in a single heap block, so that a lock costs one allocation.
// The block's address is stable for its life: the shard's hash set holds the pointer and
// the timer wheel links the embedded TimerNode, so neither needs a copy of the key.
//
// Layout: [TimerNode: prev next deadline][key_len][val_len][token?][key bytes][value bytes]
// The value's capacity is whatever the allocator actually gave (malloc_usable_size), so
// rewriting a value of similar size (SET over SET, INCR) does not reallocate.
//
// A key granted by LOCK.ACQUIRE carries its fencing token in the block (8 bytes, flagged by
// the top bit of key_len), so a held lock needs no entry in a side table. Keys and values are
// therefore at most 2^31 - 1 bytes (proto-max-bulk-len is capped accordingly).
#include <cstdint>
#include <string_view>

#include "store/timer_wheel.h"

namespace latch::store {

class Object : public TimerNode {
 public:
  // Allocates a block for key and value. Never returns nullptr (aborts on OOM like new).
  static Object* Create(std::string_view key, std::string_view value, std::uint64_t token = 0);
  static void Destroy(Object* o);
  // Replaces the value, reallocating only when it does not fit; returns the (possibly new)
  // object. A moved object is NOT scheduled on any wheel: the caller re-links it. The
  // fencing token, if any, stays.
  static Object* Assign(Object* o, std::string_view value);

  static constexpr std::size_t kMaxLength = 0x7FFFFFFF;  // of a key or a value

  std::string_view key() const { return {bytes(), key_size()}; }
  std::string_view value() const { return {bytes() + key_size(), val_len_}; }
  // The fencing token of the LOCK.ACQUIRE grant that created the key, 0 when none.
  std::uint64_t token() const;
  // Monotonic deadline in ms, 0 when the key does not expire.
  std::int64_t expire_at() const { return deadline; }
  bool has_expire() const { return deadline != 0; }
  bool expired(std::int64_t now_ms) const { return deadline != 0 && deadline <= now_ms; }
  // Bytes this object occupies on the heap (for INFO memory and the benchmark).
  std::size_t allocated_bytes() const;

 private:
  Object() = default;
  static constexpr std::uint32_t kTokenFlag = 0x80000000u;
  bool has_token() const { return (key_len_ & kTokenFlag) != 0; }
  std::size_t key_size() const { return key_len_ & ~kTokenFlag; }
  std::size_t token_size() const { return has_token() ? sizeof(std::uint64_t) : 0; }
  const char* bytes() const { return reinterpret_cast<const char*>(this + 1) + token_size(); }
  char* bytes() { return reinterpret_cast<char*>(this + 1) + token_size(); }
  std::size_t value_capacity() const;

  std::uint32_t key_len_ = 0;
  std::uint32_t val_len_ = 0;
};

}  // namespace latch::store
