#include "store/shard.h"

#include <cstring>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace latch::store {

std::uint64_t HashKey(std::string_view key) { return XXH3_64bits(key.data(), key.size()); }

Shard::Shard(int index, std::int64_t now_ms)
    : index_(index),
      wheel_(now_ms, decltype(wheel_)::kDefaultCascadeLimit, SlabSpace{&slab_}),
      access_clock_(Object::ClockAt(now_ms)) {}

Shard::~Shard() {
  events_ = nullptr;
  Clear();
}

Object* Shard::NewObject(std::string_view key, std::string_view value, std::uint64_t token) {
  std::uint32_t handle;
  std::size_t capacity;
  void* mem =
      slab_.Allocate(Object::BlockSize(key.size(), value.size(), token != 0), &handle, &capacity);
  return Object::Construct(mem, key, value, token, access_clock_.load(std::memory_order_relaxed));
}

void Shard::ScheduleFar(Object* o, std::int64_t deadline_ms) {
  o->set_deadline(deadline_ms);
  far_.emplace(deadline_ms, Slab::HandleOf(o));
}

void Shard::UnscheduleFar(Object* o) { far_.erase({o->expire_at(), Slab::HandleOf(o)}); }

void Shard::Modified(KeyEvent::Kind kind, const Object* o, std::uint64_t hash, bool created) {
  Publish();
  if (events_ != nullptr) events_->OnModified(*this, KeyEvent{kind, o->key(), hash, o, created});
}

Object* Shard::PeekSlot(std::string_view key, std::uint64_t hash, std::int64_t now_ms,
                        HandleTable::Slot** found) {
  *found = nullptr;
  HandleTable::Slot* slot = set_.Find(key, hash, [this](std::uint32_t h) { return At(h)->key(); });
  if (slot == nullptr) return nullptr;
  Object* o = At(slot->handle);
  if (o->expired(now_ms)) {
    if (HoldsExpired(now_ms)) return nullptr;
    set_.EraseSlot(slot);
    Unschedule(o);
    return OnExpired(o, hash);
  }
  *found = slot;
  return o;
}

Object* Shard::OnExpired(Object* o, std::uint64_t hash) {
  expired_total_.fetch_add(1, std::memory_order_relaxed);
  Publish();
  Object* granted = nullptr;
  if (events_ != nullptr) {
    granted = events_->OnGone(*this, KeyEvent{KeyEvent::Kind::kExpired, o->key(), hash, o, false});
  }
  FreeObject(o);
  return granted;
}

Object* Shard::Put(Object* existing, std::string_view key, std::uint64_t hash,
                   std::string_view value, Expiry expiry, std::uint64_t token) {
  bool created = false;
  Object* o = Place(existing, key, hash, value, expiry, token, &created);
  Modified(KeyEvent::Kind::kWritten, o, hash, created);
  return o;
}

Object* Shard::PutContainer(Object* existing, std::string_view key, std::uint64_t hash,
                            std::unique_ptr<Container> value, Expiry expiry) {
  Container* raw = value.get();
  char bytes[sizeof(raw)];
  std::memcpy(bytes, &raw, sizeof(raw));
  bool created = false;
  Object* o =
      Place(existing, key, hash, std::string_view(bytes, sizeof(bytes)), expiry, 0, &created);
  value.release();
  o->set_container(true);
  ++containers_;
  Modified(KeyEvent::Kind::kWritten, o, hash, created);
  return o;
}

void Shard::DropContainer(Object* o) {
  delete o->container();
  o->set_container(false);
  --containers_;
}

Object* Shard::Place(Object* existing, std::string_view key, std::uint64_t hash,
                     std::string_view value, Expiry expiry, std::uint64_t token,
                     bool* created) {
  if (existing == nullptr && held_expired_) existing = ReclaimHeld(key, hash);
  if (existing != nullptr && existing->is_container()) DropContainer(existing);
  Object* o = existing;
  *created = existing == nullptr;
  if (existing == nullptr) {
    set_.ReserveOne();  // a throw leaves nothing half-done
    o = NewObject(key, value, token);
    set_.Insert(Slab::HandleOf(o), hash);
  } else if (existing->ValueFits(slab_.Capacity(Slab::HandleOf(existing)), value.size())) {
    existing->SetValue(value);
  } else {
    // A new block (the value may be a view into the old one: build before freeing); swap
    // the handle in the set and the node on the wheel.
    const std::int64_t deadline = existing->expire_at();
    o = NewObject(key, value, existing->token());
    Unschedule(existing);
    set_.Erase(Slab::HandleOf(existing), hash);
    FreeObject(existing);
    set_.Insert(Slab::HandleOf(o), hash);
    if (deadline != 0) Schedule(o, deadline);
  }
  switch (expiry.mode) {
    case Expiry::Mode::kKeep:
      break;
    case Expiry::Mode::kClear:
      if (o->has_expire()) ClearDeadline(o);
      break;
    case Expiry::Mode::kSet:
      if (o->has_expire()) ClearDeadline(o);  // a new key (SET NX PX) has none
      Schedule(o, expiry.deadline_ms);
      break;
  }
  return o;
}

bool Shard::HoldsExpired(std::int64_t now_ms) {
  if (events_ == nullptr || !events_->ExpiryHeld(now_ms)) return false;
  held_expired_ = true;
  return true;
}

Object* Shard::ReclaimHeld(std::string_view key, std::uint64_t hash) {
  HandleTable::Slot* slot = set_.Find(key, hash, [this](std::uint32_t h) { return At(h)->key(); });
  if (slot == nullptr) return nullptr;
  Object* o = At(slot->handle);
  set_.EraseSlot(slot);
  Unschedule(o);
  return OnExpired(o, hash);
}

void Shard::SetDeadline(Object* o, std::uint64_t hash, std::int64_t deadline_ms) {
  ClearDeadline(o);
  if (deadline_ms != 0) Schedule(o, deadline_ms);
  Modified(KeyEvent::Kind::kExpireChanged, o, hash);
}

void Shard::Erase(Object* o, std::uint64_t hash) {
  set_.Erase(Slab::HandleOf(o), hash);
  OnDeleted(o, hash);
}

void Shard::OnDeleted(Object* o, std::uint64_t hash) {
  Unschedule(o);
  Publish();
  if (events_ != nullptr) {
    events_->OnGone(*this, KeyEvent{KeyEvent::Kind::kDeleted, o->key(), hash, o, false});
  }
  FreeObject(o);
}

bool Shard::Delete(std::string_view key, std::uint64_t hash, std::int64_t now_ms) {
  HandleTable::Slot* slot = set_.Find(key, hash, [this](std::uint32_t h) { return At(h)->key(); });
  if (slot == nullptr) return false;
  Object* o = At(slot->handle);
  if (o->expired(now_ms) && HoldsExpired(now_ms)) return false;
  set_.EraseSlot(slot);
  if (o->expired(now_ms)) {
    Unschedule(o);
    Object* granted = OnExpired(o, hash);
    if (granted == nullptr) return false;
    Erase(granted, hash);
    return true;
  }
  OnDeleted(o, hash);
  return true;
}

void Shard::Clear() {
  if (events_ != nullptr) events_->OnClearing(*this);
  // Every block goes at once: the wheel forgets its nodes without visiting them, the slab
  // unmaps its pages, and the index frees its slots. Only containers need a visit.
  if (containers_ > 0) {
    set_.ForEach([this](std::uint32_t h) {
      if (At(h)->is_container()) DropContainer(At(h));
    });
  }
  wheel_.Reset();
  far_.clear();
  set_.Reset();
  slab_.Clear();
  Publish();
  if (events_ != nullptr) events_->OnCleared(*this);
}

std::size_t Shard::ExpireDue(std::int64_t now_ms, std::size_t budget) {
  // The wheel keeps no hash (its node is 16 bytes): the one place a key is hashed again.
  auto expire = [this](Object* o) {
    const std::uint64_t hash = HashKey(o->key());
    set_.Erase(Slab::HandleOf(o), hash);
    OnExpired(o, hash);
  };
  std::size_t n =
      wheel_.Advance(now_ms, budget, [&](TimerNode* t) { expire(static_cast<Object*>(t)); });
  // Far deadlines come after every wheel deadline. A waiter handed a key may add to far_:
  // begin() is read again each time.
  while (n < budget && !far_.empty() && far_.begin()->first <= now_ms) {
    Object* o = At(far_.begin()->second);
    far_.erase(far_.begin());
    expire(o);
    ++n;
  }
  // Under budget: every key due by now is gone, so none held back by a pause is left.
  if (n < budget) held_expired_ = false;
  return n;
}

}  // namespace latch::store
