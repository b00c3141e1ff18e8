#include "commands/key_lock.h"

#include <algorithm>

namespace latch {

bool ShardSet::Take(store::Shard& s, const std::atomic<bool>* give_up) {
  if (store::ThisThreadHolds(s)) return true;
  if (!store::LockShard(s, give_up)) {
    Unlock();
    return false;
  }
  if (count_ < kInline) {
    inline_[count_] = &s;
  } else {
    more_.push_back(&s);
  }
  ++count_;
  return true;
}

bool ShardSet::Lock(store::Keyspace& ks, std::span<const KeyRef> keys,
                    const std::atomic<bool>* give_up) {
  if (keys.size() == 1) return Take(*keys[0].shard, give_up);
  // Mark the shards named (one pass over the keys), then lock them by index. A key of
  // another database (MOVE, COPY ... DB) is locked after ks's, in global index order.
  std::vector<char> wanted(static_cast<std::size_t>(ks.shard_count()), 0);
  std::vector<store::Shard*> others;
  for (const KeyRef& k : keys) {
    const int i = k.shard->index() - ks.base();
    if (i >= 0 && i < ks.shard_count()) {
      wanted[static_cast<std::size_t>(i)] = 1;
    } else {
      others.push_back(k.shard);
    }
  }
  std::sort(others.begin(), others.end(),
            [](const store::Shard* a, const store::Shard* b) { return a->index() < b->index(); });
  std::size_t o = 0;
  for (; o < others.size() && others[o]->index() < ks.base(); ++o) {
    if ((o == 0 || others[o] != others[o - 1]) && !Take(*others[o], give_up)) return false;
  }
  for (int i = 0; i < ks.shard_count(); ++i) {
    if (wanted[static_cast<std::size_t>(i)] && !Take(ks.shard(i), give_up)) return false;
  }
  for (; o < others.size(); ++o) {
    if ((o == 0 || others[o] != others[o - 1]) && !Take(*others[o], give_up)) return false;
  }
  return true;
}

bool ShardSet::LockEveryDb(store::KeyspaceSet& dbs, const std::atomic<bool>* give_up) {
  const int n = dbs.created();
  for (int k = 0; k < n; ++k) {
    if (!LockAll(dbs.by_identity(k), give_up)) return false;
  }
  return true;
}

bool ShardSet::LockAll(store::Keyspace& ks, const std::atomic<bool>* give_up) {
  for (int i = 0; i < ks.shard_count(); ++i) {
    if (!Take(ks.shard(i), give_up)) return false;
  }
  return true;
}

void ShardSet::Unlock() {
  for (auto it = more_.rbegin(); it != more_.rend(); ++it) store::UnlockShard(**it);
  more_.clear();
  for (std::size_t i = std::min(count_, kInline); i > 0; --i) store::UnlockShard(*inline_[i - 1]);
  count_ = 0;
}

void KeyRefs::Resolve(store::Keyspace& ks, std::span<const std::string_view> keys) {
  size_ = keys.size();
  if (size_ > kInline) {
    // Written once (no zero-fill first): a million keys are 32 MB of fresh pages.
    many_.clear();
    many_.reserve(size_);
    for (std::string_view k : keys) many_.push_back(latch::Resolve(ks, k));
    data_ = many_.data();
    return;
  }
  data_ = inline_;
  for (std::size_t i = 0; i < size_; ++i) data_[i] = latch::Resolve(ks, keys[i]);
}

}  // namespace latch
