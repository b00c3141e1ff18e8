#include "store/keyspace.h"

#include "store/shard_guard.h"

#include <bit>
#include <mutex>
#include <stdexcept>

namespace latch::store {

namespace {
thread_local bool t_holds_all = false;
}  // namespace

bool ThisThreadHoldsAllShards() { return t_holds_all; }
void SetThisThreadHoldsAllShards(bool v) { t_holds_all = v; }

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
