#include "store/keyspace.h"

#include <malloc.h>
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
// From the sanitizer runtime (GCC ships no header declaring it).
extern "C" std::size_t __sanitizer_get_current_allocated_bytes();
#endif

#include <bit>
#include <stdexcept>

namespace latch::store {

std::size_t HeapBytes() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return __sanitizer_get_current_allocated_bytes();
#else
  const struct mallinfo2 mi = mallinfo2();
  return mi.uordblks + mi.hblkhd;
#endif
}

std::size_t UsedMemoryBytes() { return HeapBytes() + Slab::Bytes(); }

Keyspace::Keyspace(int shard_count, std::int64_t now_ms, int base) : base_(base) {
  if (shard_count < 1 || !std::has_single_bit(static_cast<unsigned>(shard_count))) {
    throw std::invalid_argument("shards must be a power of two");
  }
  shift_ = 64 - static_cast<unsigned>(std::countr_zero(static_cast<unsigned>(shard_count)));
  shards_.reserve(static_cast<std::size_t>(shard_count));
  for (int i = 0; i < shard_count; ++i) {
    shards_.push_back(std::make_unique<Shard>(base + i, now_ms));
  }
}

// Shards publish their counters as atomics: no shard lock, so a stats reader never waits
// for a script or a long command.
std::size_t Keyspace::TotalKeys() const {
  std::size_t n = 0;
  for (const auto& s : shards_) n += s->size();
  return n;
}

std::size_t Keyspace::TotalExpires() const {
  std::size_t n = 0;
  for (const auto& s : shards_) n += s->expires();
  return n;
}

std::uint64_t Keyspace::TotalExpired() const {
  std::uint64_t n = 0;
  for (const auto& s : shards_) n += s->expired_total();
  return n;
}

}  // namespace latch::store
