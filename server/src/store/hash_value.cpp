#include "store/hash_value.h"

#include "store/shard.h"

namespace latch::store {

std::size_t HashValue::Hash::operator()(std::string_view s) const {
  return static_cast<std::size_t>(HashKey(s));
}

std::unique_ptr<Container> HashValue::Clone() const {
  auto copy = std::make_unique<HashValue>();
  copy->small_ = small_;
  if (big_) copy->big_ = std::make_unique<Map>(*big_);
  return copy;
}

const std::string* HashValue::Get(std::string_view field) const {
  if (big_) {
    auto it = big_->find(field);
    return it == big_->end() ? nullptr : &it->second;
  }
  for (const auto& [f, v] : small_) {
    if (f == field) return &v;
  }
  return nullptr;
}

bool HashValue::Set(std::string_view field, std::string_view value) {
  if (!big_ && (small_.size() >= kSmallEntries || field.size() > kSmallBytes ||
                value.size() > kSmallBytes)) {
    // A field already present does not grow the count; only a long string converts then.
    if (field.size() > kSmallBytes || value.size() > kSmallBytes || Get(field) == nullptr) {
      ConvertToMap();
    }
  }
  if (big_) {
    auto [it, added] = big_->try_emplace(std::string(field));
    it.value().assign(value);
    return added;
  }
  for (auto& [f, v] : small_) {
    if (f == field) {
      v.assign(value);
      return false;
    }
  }
  small_.emplace_back(std::string(field), std::string(value));
  return true;
}

bool HashValue::Erase(std::string_view field) {
  if (big_) {
    auto it = big_->find(field);
    if (it == big_->end()) return false;
    big_->erase(it);
    return true;
  }
  for (auto it = small_.begin(); it != small_.end(); ++it) {
    if (it->first == field) {
      small_.erase(it);
      return true;
    }
  }
  return false;
}

void HashValue::ConvertToMap() {
  auto map = std::make_unique<Map>();
  map->reserve(small_.size() + 1);
  for (auto& [f, v] : small_) map->emplace(std::move(f), std::move(v));
  small_.clear();
  small_.shrink_to_fit();
  big_ = std::move(map);
}

}  // namespace latch::store
