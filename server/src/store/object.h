#pragma once
// One key and its string value in a single block of the shard's slab (slab.h), so that a
// lock costs one allocation. The block's address is stable for its life: the shard's hash
// set holds its handle and the timer wheel links the embedded TimerNode, so neither needs a
// copy of the key. The shard allocates, resizes and frees objects (Shard::Set, Erase).
//
// Layout (24-byte header): [TimerNode: prev next (handles) deadline][key_len][val_len]
// [token?][key bytes][value bytes]. The value may grow into the rest of the block (its size
// class), so rewriting a value of similar size (SET over SET, INCR) does not reallocate.
//
// The header has no spare field, so the TimerNode's 8 deadline bytes hold two (a word read
// and stamped with relaxed atomics: reads may run under a shared shard lock):
// - bits 0-43: the monotonic deadline in ms, 0 when none. Exact up to 2^44 - 2 ms (557
//   years of steady_clock, which counts from boot): every TTL and every EXPIREAT of this
//   millennium. All ones marks a farther deadline (PEXPIREAT near INT64_MAX): its exact
//   value is kept in the timer links instead, which such a key does not use, since the
//   shard keeps it off the wheel (Shard::Schedule). So every int64 deadline stays exact.
// - bits 44-63: the access clock, whole monotonic seconds mod 2^20 at the key's last touch
//   (OBJECT IDLETIME). It wraps every 2^20 s (12.1 days; Redis's 24-bit clock: 194 days):
//   an idle time is the difference mod 2^20, exact across one wrap, so a key idle longer
//   than 12.1 days reads as its idle time mod 12.1 days.
//
// A key granted by LOCK.ACQUIRE carries its fencing token in the block (8 bytes, flagged by
// the top bit of key_len), so a held lock needs no entry in a side table. Keys and values are
// therefore at most 2^31 - 1 bytes (proto-max-bulk-len is capped accordingly).
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>

#include "store/timer_wheel.h"

namespace latch::store {

// What an object's value is. A string's bytes live in the block; every other type keeps a
// pointer to a heap Container in its 8 value bytes (flagged by bit 30 of key_len), and its
// own Ops file next to string_ops.h (hash_ops.h, zset_ops.h), while key_ops.h (DEL, EXPIRE,
// TTL) serves every type unchanged. The shard owns the container: it deletes it when the
// object is erased, expires, is overwritten or its shard is flushed (Shard::FreeObject).
enum class ObjectType : std::uint8_t { kString, kHash, kZSet };

// The heap value of a non-string object (hash_value.h, zset_value.h).
class Container {
 public:
  virtual ~Container() = default;
  virtual ObjectType type() const = 0;
  // A deep copy (COPY).
  virtual std::unique_ptr<Container> Clone() const = 0;
};

// TYPE's answer.
constexpr std::string_view TypeName(ObjectType t) {
  switch (t) {
    case ObjectType::kString: return "string";
    case ObjectType::kHash: return "hash";
    case ObjectType::kZSet: return "zset";
  }
  return "none";
}

class Object : public TimerNode {
 public:
  static constexpr std::size_t kMaxLength = 0x7FFFFFFF;  // of a key or a value

  // Bytes a block needs for this key, value and (non-zero) token.
  static std::size_t BlockSize(std::size_t key, std::size_t value, bool token) {
    return sizeof(Object) + (token ? sizeof(std::uint64_t) : 0) + key + value;
  }
  // Builds an object in `mem` (BlockSize bytes at least, 8-byte aligned), without a
  // deadline, touched at access clock `clock` (ClockAt).
  static Object* Construct(void* mem, std::string_view key, std::string_view value,
                           std::uint64_t token, std::uint32_t clock);
  // Whether a value of `size` bytes fits a block of `capacity` bytes holding this key.
  bool ValueFits(std::size_t capacity, std::size_t size) const {
    return BlockSize(key_size(), size, has_token()) <= capacity;
  }
  // Replaces the value in place; the caller checked ValueFits.
  void SetValue(std::string_view value);

  // Bit 30 of key_len_ says the value is a Container pointer, whose own tag names the type
  // (keys stay below proto-max-bulk-len's 512 MB default, so the bit is free).
  ObjectType type() const { return is_container() ? container()->type() : ObjectType::kString; }
  bool is_container() const { return (key_len_ & kContainerFlag) != 0; }
  // The heap value of a hash or sorted set; only valid when is_container().
  Container* container() const {
    Container* c = nullptr;
    std::memcpy(&c, bytes() + key_size(), sizeof(c));
    return c;
  }
  // Shard only: whether the 8 value bytes are a Container pointer it owns.
  void set_container(bool on) {
    key_len_ = on ? (key_len_ | kContainerFlag) : (key_len_ & ~kContainerFlag);
  }
  std::string_view key() const { return {bytes(), key_size()}; }
  std::string_view value() const { return {bytes() + key_size(), val_len_}; }
  // The fencing token of the LOCK.ACQUIRE grant that created the key, 0 when none. Inline:
  // every removal's key event reads it (the lock metrics).
  std::uint64_t token() const {
    std::uint64_t token = 0;
    if (has_token()) std::memcpy(&token, reinterpret_cast<const char*>(this + 1), sizeof(token));
    return token;
  }
  // Monotonic deadline in ms, 0 when the key does not expire.
  std::int64_t expire_at() const {
    const std::uint64_t d = Word() & kDeadlineMask;
    return d == kDeadlineMask ? FarDeadline() : static_cast<std::int64_t>(d);
  }
  bool has_expire() const { return (Word() & kDeadlineMask) != 0; }
  bool expired(std::int64_t now_ms) const {
    const auto d = static_cast<std::int64_t>(Word() & kDeadlineMask);
    return d != 0 && d <= now_ms && (d != kFarMark || FarDeadline() <= now_ms);
  }
  // Shard only: whether the deadline is past the packed range (kept in the links, the key
  // off the wheel).
  bool far_deadline() const { return (Word() & kDeadlineMask) == kDeadlineMask; }
  // Shard only, with the object off the wheel: sets the deadline (0: none; a negative one,
  // already past, is kept as 1), keeping the access clock.
  void set_deadline(std::int64_t deadline_ms);
  // The same for a deadline in [1, kMaxPackedDeadline] on an object without a deadline (the
  // wheel's Schedule): the fast path.
  void set_packed_deadline(std::int64_t deadline_ms) {
    StoreWord(Word() | static_cast<std::uint64_t>(deadline_ms));
  }
  static constexpr std::int64_t kMaxPackedDeadline = (std::int64_t{1} << 44) - 2;

  // The access clock (see the layout above): a reading at monotonic time now_ms.
  static constexpr std::uint32_t kClockMask = (1u << 20) - 1;
  static constexpr std::uint32_t ClockAt(std::int64_t now_ms) {
    return static_cast<std::uint32_t>(now_ms / 1000) & kClockMask;
  }
  // The clock reading of the last touch.
  std::uint32_t access_clock() const { return static_cast<std::uint32_t>(Word() >> kClockShift); }
  // Seconds from the last touch to clock reading `now`, mod the clock's period: one wrap
  // of the clock between the two still gives the true difference.
  std::uint32_t IdleSeconds(std::uint32_t now) const { return (now - access_clock()) & kClockMask; }
  // Stamps the access clock. Stores only when the reading changed, so a hot key's reads do
  // not dirty its cache line each time. Called with the shard's lock held (shards have one
  // exclusive lock, no reader lock), so no other thread changes the word meanwhile.
  void Touch(std::uint32_t clock) {
    const std::uint64_t w = Word();
    if ((w >> kClockShift) != clock) {
      StoreWord((w & kDeadlineMask) | (std::uint64_t{clock} << kClockShift));
    }
  }

 private:
  static constexpr int kClockShift = 44;
  static constexpr std::uint64_t kDeadlineMask = (std::uint64_t{1} << kClockShift) - 1;
  static constexpr auto kFarMark = static_cast<std::int64_t>(kDeadlineMask);
  std::uint64_t Word() const {
    return static_cast<std::uint64_t>(std::atomic_ref<std::int64_t>(
        const_cast<std::int64_t&>(deadline)).load(std::memory_order_relaxed));
  }
  void StoreWord(std::uint64_t w) {
    std::atomic_ref<std::int64_t>(deadline).store(static_cast<std::int64_t>(w),
                                                  std::memory_order_relaxed);
  }
  // A far deadline's 64 bits, in the timer links.
  std::int64_t FarDeadline() const {
    return static_cast<std::int64_t>((std::uint64_t{next} << 32) | prev);
  }

  Object() = default;
  static constexpr std::uint32_t kTokenFlag = 0x80000000u;
  static constexpr std::uint32_t kContainerFlag = 0x40000000u;
  bool has_token() const { return (key_len_ & kTokenFlag) != 0; }
  std::size_t key_size() const { return key_len_ & ~(kTokenFlag | kContainerFlag); }
  std::size_t token_size() const { return has_token() ? sizeof(std::uint64_t) : 0; }
  const char* bytes() const { return reinterpret_cast<const char*>(this + 1) + token_size(); }
  char* bytes() { return reinterpret_cast<char*>(this + 1) + token_size(); }

  std::uint32_t key_len_ = 0;
  std::uint32_t val_len_ = 0;
};

static_assert(sizeof(Object) == 24);

}  // namespace latch::store
