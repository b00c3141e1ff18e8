#pragma once
// The server's databases (SELECT 0..databases-1): one Keyspace each, created on first use so
// that a server only ever in DB 0 pays for exactly one keyspace (its shards, wheels and lock
// tables) and a script or EXEC locks exactly the shards it did before databases existed.
//
// Two numberings:
// - the database number (SELECT n), mapped to a Keyspace through slots_: SWAPDB swaps two
//   slots (O(1)) while holding every shard of both;
// - the creation order of a Keyspace, its "identity" k: its shards have the global indices
//   k * shards_per_db + i for ever. Shard locks are taken in ascending global index, so a
//   database created later always sorts after every shard held already: a script or EXEC that
//   holds every shard of every database existing when it started may still lock a database
//   created meanwhile without breaking the lock order.
//
// Threading: Ensure() creates under create_mu_ and publishes with a release store; readers
// load slots with acquire (a plain load on x86). Swap() runs with both databases' shards held.
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "store/keyspace.h"

namespace latch::store {

class KeyspaceSet {
 public:
  // databases >= 1; shards_per_db a power of two. Creates database 0.
  KeyspaceSet(int databases, int shards_per_db, std::int64_t now_ms);

  int count() const { return count_; }
  int shards_per_db() const { return shards_per_db_; }
  // Global shard indices run below this (every database created).
  int max_shards() const { return count_ * shards_per_db_; }

  // Database `db`, which must exist (Ensure): the hot path's one indexed load.
  Keyspace& at(int db) const {
    return *slots_[static_cast<std::size_t>(db)].load(std::memory_order_acquire);
  }
  // Database `db` or nullptr when nothing created it yet (INFO, DBSIZE of another db).
  Keyspace* Find(int db) const {
    return slots_[static_cast<std::size_t>(db)].load(std::memory_order_acquire);
  }
  // Creates database `db` when missing; `on_create` runs once on the new keyspace before it
  // is published (it installs the key-event hook and the lock tables).
  Keyspace& Ensure(int db, const std::function<void(Keyspace&)>& on_create);

  // Keyspaces in creation order (ascending global shard index); `n` of them exist.
  int created() const { return created_.load(std::memory_order_acquire); }
  Keyspace& by_identity(int k) const { return *identities_[static_cast<std::size_t>(k)]; }
  // The shard with global index `i`, or nullptr while its database does not exist.
  Shard* ShardAt(int i) const;
  // The database number a shard belongs to now (changes with SWAPDB).
  int DbOf(const Shard& s) const {
    return db_of_[static_cast<std::size_t>(s.index() / shards_per_db_)].load(
        std::memory_order_relaxed);
  }

  // Exchanges databases a and b (both created); the caller holds every shard of both.
  void Swap(int a, int b);
  // How many Swap calls ran (the journal's rewrite checks none ran during its snapshot).
  std::uint64_t swaps() const { return swaps_.load(std::memory_order_acquire); }

  // Sums over every database (as Keyspace's: no lock taken).
  std::size_t TotalKeys() const;
  std::size_t TotalExpires() const;
  std::uint64_t TotalExpired() const;
  // fn(db, keyspace) for each created database, by database number.
  // (Linear in the databases created, not in `databases`.)
  template <class Fn>
  void ForEachDb(Fn&& fn) const {
    for (int db : CreatedDbs()) fn(db, at(db));
  }
  std::vector<int> CreatedDbs() const;

 private:
  int count_;
  int shards_per_db_;
  std::int64_t created_at_ms_;
  std::mutex create_mu_;
  std::atomic<int> created_{0};
  std::atomic<std::uint64_t> swaps_{0};
  std::unique_ptr<std::atomic<Keyspace*>[]> slots_;          // by database number
  std::vector<std::unique_ptr<Keyspace>> identities_;        // by creation order, sized count_
  std::unique_ptr<std::atomic<int>[]> db_of_;                 // identity -> database number
};

}  // namespace latch::store
