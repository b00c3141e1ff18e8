#include "store/hash_value.h"

#include <cstdlib>
#include <cstring>
#include <new>

#include "store/shard.h"

namespace latch::store {

std::size_t HashValue::EntryHash::operator()(std::string_view f) const {
  return static_cast<std::size_t>(HashKey(f));
}

HashValue::~HashValue() {
  if (big_) {
    for (Entry* e : *big_) std::free(e);
  }
}

HashValue::Entry* HashValue::NewEntry(std::string_view field, std::string_view value) {
  void* mem = std::malloc(sizeof(Entry) + field.size() + value.size());
  if (mem == nullptr) throw std::bad_alloc();
  Entry* e = static_cast<Entry*>(mem);
  e->flen = static_cast<std::uint32_t>(field.size());
  e->vlen = static_cast<std::uint32_t>(value.size());
  char* bytes = reinterpret_cast<char*>(e + 1);
  if (!field.empty()) std::memcpy(bytes, field.data(), field.size());
  if (!value.empty()) std::memcpy(bytes + field.size(), value.data(), value.size());
  return e;
}

std::unique_ptr<Container> HashValue::Clone() const {
  auto copy = std::make_unique<HashValue>();
  copy->small_ = small_;
  copy->small_count_ = small_count_;
  if (big_) {
    copy->big_ = std::make_unique<Map>();
    copy->big_->reserve(big_->size());
    for (const Entry* e : *big_) copy->big_->insert(NewEntry(e->field(), e->value()));
  }
  return copy;
}

HashValue::SmallEntry HashValue::SmallAt(std::size_t pos) const {
  SmallEntry e;
  e.begin = pos;
  const auto flen = static_cast<unsigned char>(small_[pos]);
  e.field = std::string_view(small_).substr(pos + 1, flen);
  pos += 1 + flen;
  const auto vlen = static_cast<unsigned char>(small_[pos]);
  e.value = std::string_view(small_).substr(pos + 1, vlen);
  e.end = pos + 1 + vlen;
  return e;
}

bool HashValue::FindSmall(std::string_view field, SmallEntry* out) const {
  for (std::size_t pos = 0; pos < small_.size();) {
    *out = SmallAt(pos);
    if (out->field == field) return true;
    pos = out->end;
  }
  return false;
}

bool HashValue::Get(std::string_view field, std::string_view* value) const {
  if (big_) {
    auto it = big_->find(field);
    if (it == big_->end()) return false;
    *value = (*it)->value();
    return true;
  }
  SmallEntry e;
  if (!FindSmall(field, &e)) return false;
  *value = e.value;
  return true;
}

bool HashValue::Set(std::string_view field, std::string_view value) {
  if (!big_ && (field.size() > kSmallBytes || value.size() > kSmallBytes ||
                (small_count_ >= kSmallEntries && !Has(field)))) {
    ConvertToMap();
  }
  if (big_) {
    Entry* fresh = NewEntry(field, value);
    auto it = big_->find(field);
    const bool added = it == big_->end();
    if (!added) {
      Entry* old = *it;
      big_->erase(it);
      std::free(old);
    }
    big_->insert(fresh);
    return added;
  }
  SmallEntry e;
  std::string entry;
  entry.push_back(static_cast<char>(field.size()));
  entry.append(field);
  entry.push_back(static_cast<char>(value.size()));
  entry.append(value);
  if (FindSmall(field, &e)) {
    small_.replace(e.begin, e.end - e.begin, entry);  // keeps the field's place
    return false;
  }
  small_.append(entry);
  ++small_count_;
  return true;
}

bool HashValue::Erase(std::string_view field) {
  if (big_) {
    auto it = big_->find(field);
    if (it == big_->end()) return false;
    Entry* old = *it;
    big_->erase(it);
    std::free(old);
    return true;
  }
  SmallEntry e;
  if (!FindSmall(field, &e)) return false;
  small_.erase(e.begin, e.end - e.begin);
  --small_count_;
  return true;
}

void HashValue::ConvertToMap() {
  auto map = std::make_unique<Map>();
  map->reserve(small_count_ + 1);
  ForEach([&](std::string_view f, std::string_view v) { map->insert(NewEntry(f, v)); });
  small_.clear();
  small_.shrink_to_fit();
  small_count_ = 0;
  big_ = std::move(map);
}

}  // namespace latch::store
