#include "store/key_batch.h"

#include <stdexcept>

namespace latch::store {

ShardBatches::ShardBatches(Keyspace& ks, std::span<const std::string_view> keys)
    : ks_(ks),
      keys_(keys),
      begin_(static_cast<std::size_t>(ks.shard_count()) + 1, 0),
      hashes_(new std::uint64_t[keys.size()]),
      order_(new std::uint32_t[keys.size()]) {
  // A request holds at most INT_MAX arguments (the parser's limit), so positions fit.
  const std::size_t n = keys.size();
  // Pass 1: each key's hash, and how many keys each shard gets (counted one slot up, so
  // that the running sum below leaves begin_[i] at shard i's first position).
  for (std::size_t i = 0; i < n; ++i) {
    hashes_[i] = HashKey(keys[i]);
    ++begin_[static_cast<std::size_t>(ks.ShardIndex(hashes_[i])) + 1];
  }
  for (std::size_t i = 1; i < begin_.size(); ++i) begin_[i] += begin_[i - 1];
  // Pass 2: the positions, in argument order within each shard.
  std::vector<std::size_t> next(begin_.begin(), begin_.end() - 1);
  for (std::size_t i = 0; i < n; ++i) {
    order_[next[static_cast<std::size_t>(ks.ShardIndex(hashes_[i]))]++] =
        static_cast<std::uint32_t>(i);
  }
}

}  // namespace latch::store
