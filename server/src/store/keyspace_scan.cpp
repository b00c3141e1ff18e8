#include "store/keyspace_scan.h"

#include <algorithm>
#include <bit>

#include "store/handle_table.h"

namespace latch::store {
namespace {

// The scan order's fields: s shard bits on top, the 32 low hash bits below them, the
// remaining 32 - s hash bits last (s < 32: shard counts are ints).
struct ScanLayout {
  unsigned s;
  explicit ScanLayout(const Keyspace& ks)
      : s(static_cast<unsigned>(std::countr_zero(static_cast<unsigned>(ks.shard_count())))) {}
  std::uint64_t ShardStart(int i) const {
    return s == 0 ? 0 : static_cast<std::uint64_t>(i) << (64 - s);
  }
  std::uint64_t Low32(std::uint64_t order) const { return (order >> (32 - s)) & 0xffffffffu; }
  std::uint64_t At(int i, std::uint64_t low32) const { return ShardStart(i) | low32 << (32 - s); }
};

}  // namespace

std::uint64_t ScanOrder(const Keyspace& ks, std::uint64_t hash) {
  const ScanLayout l(ks);
  const std::uint64_t top = l.s == 0 ? 0 : hash & (~std::uint64_t{0} << (64 - l.s));
  const std::uint64_t rest = (hash >> 32) & ((std::uint64_t{1} << (32 - l.s)) - 1);
  return top | (hash & 0xffffffffu) << (32 - l.s) | rest;
}

std::uint64_t ScanShard(Keyspace& ks, int i, std::uint64_t cursor, std::size_t want,
                        std::size_t* empty_budget, std::vector<ScanEntry>* out) {
  const ScanLayout l(ks);
  const std::uint64_t start = std::max(cursor, l.ShardStart(i));
  const auto from = static_cast<std::uint32_t>(l.Low32(start));
  std::vector<ScanEntry> found;
  const std::uint64_t resume = ks.shard(i).ScanFrom(from, want, empty_budget, [&](const Object* o) {
    const std::uint64_t hash = HashKey(o->key());
    const std::uint64_t order = ScanOrder(ks, hash);
    // Keys of `from`'s slot below the cursor were returned by an earlier call.
    if (order >= start) found.push_back({order, hash, std::string(o->key())});
  });
  std::uint64_t next = resume != HandleTable::kScanEnd ? l.At(i, resume)
                       : i + 1 < ks.shard_count()      ? l.ShardStart(i + 1)
                                                       : 0;
  std::sort(found.begin(), found.end(), [](const ScanEntry& a, const ScanEntry& b) {
    return a.order != b.order ? a.order < b.order : a.key < b.key;
  });
  if (found.size() > want && want > 0) {
    // The walk ends at a slot boundary: keep `want` keys and those sharing the last one's
    // hash, and resume just after it (wrapping to 0 after the largest order: done).
    std::size_t keep = want;
    while (keep < found.size() && found[keep].order == found[want - 1].order) ++keep;
    if (keep < found.size()) {
      next = found[keep - 1].order + 1;
      found.resize(keep);
    }
  }
  for (ScanEntry& e : found) out->push_back(std::move(e));
  return next;
}

}  // namespace latch::store
