#include "store/shard.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace latch::store {

std::uint64_t HashKey(std::string_view key) { return XXH3_64bits(key.data(), key.size()); }

Shard::Shard(std::int64_t now_ms)
    : wheel_(now_ms, decltype(wheel_)::kDefaultCascadeLimit, SlabSpace{&slab_}) {}

Shard::~Shard() {
  watcher_ = nullptr;
  journal_ = nullptr;
  Clear();
}

Object* Shard::NewObject(std::string_view key, std::string_view value, std::uint64_t token) {
  std::uint32_t handle;
  std::size_t capacity;
  void* mem = slab_.Allocate(Object::BlockSize(key.size(), value.size(), token != 0), &handle,
                             &capacity);
  return Object::Construct(mem, key, value, token);
}

Object* Shard::Find(std::string_view key, std::uint64_t hash, std::int64_t now_ms) {
  HandleTable::Slot* slot =
      set_.Find(key, hash, [this](std::uint32_t h) { return At(h)->key(); });
  if (slot == nullptr) return nullptr;
  Object* o = At(slot->handle);
  if (o->expired(now_ms)) {
    ++mutations_;
    set_.EraseSlot(slot);
    wheel_.Cancel(o);
    return OnExpired(o, hash);
  }
  return o;
}

Object* Shard::OnExpired(Object* o, std::uint64_t hash) {
  ++expired_total_;
  if (journal_ != nullptr) journal_->Gone(o->key());
  if (expired_locks_ != nullptr && o->token() != 0) {
    expired_locks_->fetch_add(1, std::memory_order_relaxed);
  }
  Object* granted = nullptr;
  if (watcher_ != nullptr) [[unlikely]] {
    granted = watcher_->OnKeyGone(*this, o->key(), hash, KeyWatcher::Reason::kExpired);
  }
  FreeObject(o);
  return granted;
}

Object* Shard::CreateLock(std::string_view key, std::string_view owner, std::uint64_t token) {
  set_.ReserveOne();  // a throw leaves nothing half-done
  Object* o = NewObject(key, owner, token);
  ++mutations_;
  set_.Insert(Slab::HandleOf(o), HashKey(key));
  if (journal_ != nullptr) journal_->Modified(*o);
  return o;
}

Object* Shard::Set(Object* existing, std::string_view key, std::string_view value,
                   bool keep_ttl) {
  if (existing == nullptr) {
    set_.ReserveOne();  // a throw leaves nothing half-done
    Object* o = NewObject(key, value, 0);
    ++mutations_;
    set_.Insert(Slab::HandleOf(o), HashKey(key));
    if (journal_ != nullptr) journal_->Modified(*o);
    return o;
  }
  ++mutations_;
  const std::uint32_t old_handle = Slab::HandleOf(existing);
  if (existing->ValueFits(slab_.Capacity(old_handle), value.size())) {
    existing->SetValue(value);
    if (!keep_ttl && existing->deadline != 0) {
      wheel_.Cancel(existing);
      existing->deadline = 0;
    }
    if (journal_ != nullptr) journal_->Modified(*existing);
    return existing;
  }
  // A new block (the value may be a view into the old one: build before freeing); swap the
  // handle in the set and the node on the wheel.
  const std::int64_t deadline = existing->deadline;
  Object* o = NewObject(key, value, existing->token());
  const std::uint64_t hash = HashKey(key);
  wheel_.Cancel(existing);
  set_.Erase(old_handle, hash);
  FreeObject(existing);
  set_.Insert(Slab::HandleOf(o), hash);
  if (keep_ttl && deadline != 0) wheel_.Schedule(o, deadline);
  if (journal_ != nullptr) journal_->Modified(*o);
  return o;
}

void Shard::SetDeadline(Object* o, std::int64_t deadline_ms) {
  ++mutations_;
  wheel_.Cancel(o);
  o->deadline = 0;
  if (deadline_ms != 0) wheel_.Schedule(o, deadline_ms);
  if (journal_ != nullptr) journal_->Modified(*o);
}

void Shard::Erase(Object* o) {
  ++mutations_;
  wheel_.Cancel(o);
  const std::uint64_t hash = HashKey(o->key());
  set_.Erase(Slab::HandleOf(o), hash);
  if (journal_ != nullptr) journal_->Gone(o->key());  // before a waiter's grant
  if (watcher_ != nullptr) [[unlikely]] {
    watcher_->OnKeyGone(*this, o->key(), hash, KeyWatcher::Reason::kDeleted);
  }
  FreeObject(o);
}

void Shard::Clear() {
  if (!set_.empty()) ++mutations_;
  // Every block goes at once: the wheel forgets its nodes without visiting them, the slab
  // unmaps its pages, and the index frees its slots.
  wheel_.Reset();
  set_.Reset();
  slab_.Clear();
  if (journal_ != nullptr) journal_->Cleared(*this);
  if (watcher_ != nullptr) [[unlikely]] watcher_->OnCleared(*this);
}

std::size_t Shard::ExpireDue(std::int64_t now_ms, std::size_t budget) {
  return wheel_.Advance(now_ms, budget, [this](TimerNode* n) {
    Object* o = static_cast<Object*>(n);
    ++mutations_;
    const std::uint64_t hash = HashKey(o->key());
    set_.Erase(Slab::HandleOf(o), hash);
    OnExpired(o, hash);
  });
}

}  // namespace latch::store
