#pragma once
// A growth policy for tsl::robin_set that lets the table grow by half (not double) and
// maps a hash to a bucket with a multiply instead of a mask ("fast range": the low 32
// bits of the hash, scaled to the bucket count), so the bucket count need not be a power
// of two.
//
// Why: a shard's keys share the top bits of their hash (they pick the shard), and with
// power-of-two tables and a 0.5 load factor a bucket array is 2 to 4 times the number of
// keys; 16-byte buckets then cost 32-64 bytes per key, a third of a lock's memory. Growing
// by 1.5 under a 0.9 load factor keeps it between 1.1 and 1.7 buckets per key.
#include <cstddef>
#include <cstdint>
#include <stdexcept>

namespace latch::store {

class FastRangeGrowth {
 public:
  explicit FastRangeGrowth(std::size_t& min_bucket_count_in_out) {
    if (min_bucket_count_in_out > max_bucket_count()) {
      throw std::length_error("The hash table exceeds its maximum size.");
    }
    buckets_ = min_bucket_count_in_out > 0 ? min_bucket_count_in_out : 1;
    min_bucket_count_in_out = buckets_;
  }

  std::size_t bucket_for_hash(std::size_t hash) const noexcept {
    return static_cast<std::size_t>(
        (std::uint64_t{static_cast<std::uint32_t>(hash)} * buckets_) >> 32);
  }

  std::size_t next_bucket_count() const {
    if (buckets_ >= max_bucket_count()) {
      throw std::length_error("The hash table exceeds its maximum size.");
    }
    const std::size_t next = buckets_ < 16 ? buckets_ * 2 : buckets_ + buckets_ / 2;
    return next < max_bucket_count() ? next : max_bucket_count();
  }

  // The hash's low 32 bits are scaled, so more buckets than 2^32 would never be used.
  std::size_t max_bucket_count() const { return std::size_t{1} << 32; }

  void clear() noexcept { buckets_ = 1; }

 private:
  std::uint64_t buckets_;
};

}  // namespace latch::store
