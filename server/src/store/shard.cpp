#include "store/shard.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace latch::store {

std::uint64_t HashKey(std::string_view key) { return XXH3_64bits(key.data(), key.size()); }

std::size_t ObjectHash::operator()(std::string_view key) const { return HashKey(key); }

Shard::Shard(std::int64_t now_ms) : wheel_(now_ms) { set_.max_load_factor(kMaxLoadFactor); }

Shard::~Shard() {
  watcher_ = nullptr;
  Clear();
}

Object* Shard::Find(std::string_view key, std::uint64_t hash, std::int64_t now_ms) {
  auto it = set_.find(key, hash);
  if (it == set_.end()) return nullptr;
  Object* o = *it;
  if (o->expired(now_ms)) {
    ++mutations_;
    set_.erase(it);
    wheel_.Cancel(o);
    return OnExpired(o, hash);
  }
  return o;
}

Object* Shard::OnExpired(Object* o, std::uint64_t hash) {
  ++expired_total_;
  if (expired_locks_ != nullptr && o->token() != 0) {
    expired_locks_->fetch_add(1, std::memory_order_relaxed);
  }
  Object* granted = nullptr;
  if (watcher_ != nullptr) [[unlikely]] {
    granted = watcher_->OnKeyGone(*this, o->key(), hash, KeyWatcher::Reason::kExpired);
  }
  Object::Destroy(o);
  return granted;
}

Object* Shard::CreateLock(std::string_view key, std::string_view owner, std::uint64_t token) {
  ++mutations_;
  Object* o = Object::Create(key, owner, token);
  set_.insert(o);
  return o;
}

Object* Shard::Set(Object* existing, std::string_view key, std::string_view value,
                   bool keep_ttl) {
  ++mutations_;
  if (existing == nullptr) {
    Object* o = Object::Create(key, value);
    set_.insert(o);
    return o;
  }
  std::int64_t deadline = existing->deadline;
  Object* o = Object::Assign(existing, value);
  if (o != existing) {
    // The block moved: swap the pointer in the set and the node on the wheel.
    wheel_.Cancel(existing);
    set_.erase(existing);
    Object::Destroy(existing);
    o->deadline = 0;
    set_.insert(o);
    if (keep_ttl && deadline != 0) wheel_.Schedule(o, deadline);
  } else if (!keep_ttl && o->deadline != 0) {
    wheel_.Cancel(o);
    o->deadline = 0;
  }
  return o;
}

void Shard::SetDeadline(Object* o, std::int64_t deadline_ms) {
  ++mutations_;
  wheel_.Cancel(o);
  o->deadline = 0;
  if (deadline_ms != 0) wheel_.Schedule(o, deadline_ms);
}

void Shard::Erase(Object* o) {
  ++mutations_;
  wheel_.Cancel(o);
  set_.erase(o);
  if (watcher_ != nullptr) [[unlikely]] {
    watcher_->OnKeyGone(*this, o->key(), HashKey(o->key()), KeyWatcher::Reason::kDeleted);
  }
  Object::Destroy(o);
}

void Shard::Clear() {
  if (!set_.empty()) ++mutations_;
  for (Object* o : set_) {
    wheel_.Cancel(o);
    Object::Destroy(o);
  }
  // A fresh table, so that FLUSHALL gives the buckets back too (clear() keeps them).
  Set_ empty;
  empty.max_load_factor(kMaxLoadFactor);
  set_.swap(empty);
  if (watcher_ != nullptr) [[unlikely]] watcher_->OnCleared(*this);
}

std::size_t Shard::ExpireDue(std::int64_t now_ms, std::size_t budget) {
  return wheel_.Advance(now_ms, budget, [this](TimerNode* n) {
    Object* o = static_cast<Object*>(n);
    ++mutations_;
    set_.erase(o);
    OnExpired(o, watcher_ != nullptr ? HashKey(o->key()) : 0);
  });
}

}  // namespace latch::store
