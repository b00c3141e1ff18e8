#include "store/keyspace.h"

#include "store/shard_guard.h"

#include <malloc.h>
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
// From the sanitizer runtime (GCC ships no header declaring it).
extern "C" std::size_t __sanitizer_get_current_allocated_bytes();
#endif

#include <bit>
#include <mutex>
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

namespace {
thread_local bool t_holds_all = false;
// Shards held through MultiShardLock: a command touches few keys, so a short array.
constexpr int kMaxHeld = 64;  // MultiShardLock never tracks more
thread_local const Shard* t_held[kMaxHeld];
thread_local int t_held_count = 0;
}  // namespace

bool ThisThreadHoldsAllShards() { return t_holds_all; }
void SetThisThreadHoldsAllShards(bool v) { t_holds_all = v; }

bool ThisThreadHolds(const Shard* s) {
  if (t_holds_all) return true;
  for (int i = 0; i < t_held_count; ++i) {
    if (t_held[i] == s) return true;
  }
  return false;
}

void NoteHeld(const Shard* s) {
  if (t_held_count < kMaxHeld) t_held[t_held_count++] = s;
}

void NoteReleased(const Shard* s) {
  for (int i = 0; i < t_held_count; ++i) {
    if (t_held[i] == s) {
      t_held[i] = t_held[--t_held_count];
      return;
    }
  }
}

Keyspace::Keyspace(int shard_count, std::int64_t now_ms) {
  if (shard_count < 1 || !std::has_single_bit(static_cast<unsigned>(shard_count))) {
    throw std::invalid_argument("shards must be a power of two");
  }
  shift_ = 64 - static_cast<unsigned>(std::countr_zero(static_cast<unsigned>(shard_count)));
  shards_.reserve(static_cast<std::size_t>(shard_count));
  for (int i = 0; i < shard_count; ++i) shards_.push_back(std::make_unique<Shard>(now_ms));
}

std::size_t Keyspace::TotalKeys() {
  std::size_t n = 0;
  for (auto& s : shards_) {
    ShardGuard lock(*s);
    n += s->size();
  }
  return n;
}

std::size_t Keyspace::TotalExpires() {
  std::size_t n = 0;
  for (auto& s : shards_) {
    ShardGuard lock(*s);
    n += s->expires();
  }
  return n;
}

std::uint64_t Keyspace::TotalExpired() {
  std::uint64_t n = 0;
  for (auto& s : shards_) {
    ShardGuard lock(*s);
    n += s->expired_total();
  }
  return n;
}

}  // namespace latch::store
