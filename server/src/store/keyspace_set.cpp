#include "store/keyspace_set.h"

#include <algorithm>
#include <stdexcept>

namespace latch::store {

KeyspaceSet::KeyspaceSet(int databases, int shards_per_db, std::int64_t now_ms)
    : count_(databases),
      shards_per_db_(shards_per_db),
      created_at_ms_(now_ms),
      slots_(std::make_unique<std::atomic<Keyspace*>[]>(static_cast<std::size_t>(databases))),
      identities_(static_cast<std::size_t>(databases)),
      db_of_(std::make_unique<std::atomic<int>[]>(static_cast<std::size_t>(databases))) {
  if (databases < 1) throw std::invalid_argument("databases must be at least 1");
  for (int i = 0; i < databases; ++i) slots_[static_cast<std::size_t>(i)].store(nullptr);
  Ensure(0, [](Keyspace&) {});
}

Keyspace& KeyspaceSet::Ensure(int db, const std::function<void(Keyspace&)>& on_create) {
  if (Keyspace* ks = Find(db)) return *ks;
  std::lock_guard lock(create_mu_);
  if (Keyspace* ks = Find(db)) return *ks;
  const int k = created_.load(std::memory_order_relaxed);
  auto ks = std::make_unique<Keyspace>(shards_per_db_, created_at_ms_, k * shards_per_db_);
  on_create(*ks);
  Keyspace* raw = ks.get();
  identities_[static_cast<std::size_t>(k)] = std::move(ks);
  db_of_[static_cast<std::size_t>(k)].store(db, std::memory_order_relaxed);
  slots_[static_cast<std::size_t>(db)].store(raw, std::memory_order_release);
  created_.store(k + 1, std::memory_order_release);  // after the slot: CreatedDbs reads both
  return *raw;
}

Shard* KeyspaceSet::ShardAt(int i) const {
  const int k = i / shards_per_db_;
  if (k >= created()) return nullptr;
  return &by_identity(k).shard(i % shards_per_db_);
}

void KeyspaceSet::Swap(int a, int b) {
  swaps_.fetch_add(1, std::memory_order_acq_rel);
  Keyspace* ka = slots_[static_cast<std::size_t>(a)].load(std::memory_order_relaxed);
  Keyspace* kb = slots_[static_cast<std::size_t>(b)].load(std::memory_order_relaxed);
  slots_[static_cast<std::size_t>(a)].store(kb, std::memory_order_release);
  slots_[static_cast<std::size_t>(b)].store(ka, std::memory_order_release);
  db_of_[static_cast<std::size_t>(ka->base() / shards_per_db_)].store(b, std::memory_order_relaxed);
  db_of_[static_cast<std::size_t>(kb->base() / shards_per_db_)].store(a, std::memory_order_relaxed);
}

std::size_t KeyspaceSet::TotalKeys() const {
  std::size_t n = 0;
  for (int k = 0; k < created(); ++k) n += by_identity(k).TotalKeys();
  return n;
}

std::vector<int> KeyspaceSet::CreatedDbs() const {
  std::vector<int> dbs;
  for (int k = 0; k < created(); ++k) {
    dbs.push_back(db_of_[static_cast<std::size_t>(k)].load(std::memory_order_relaxed));
  }
  std::sort(dbs.begin(), dbs.end());
  return dbs;
}

std::size_t KeyspaceSet::TotalExpires() const {
  std::size_t n = 0;
  for (int k = 0; k < created(); ++k) n += by_identity(k).TotalExpires();
  return n;
}

std::uint64_t KeyspaceSet::TotalExpired() const {
  std::uint64_t n = 0;
  for (int k = 0; k < created(); ++k) n += by_identity(k).TotalExpired();
  return n;
}

}  // namespace latch::store
