#pragma once
// A hash's value: field -> value. Small hashes (at most kSmallEntries fields, each field and
// value at most kSmallBytes) keep their fields in insertion order in one vector, as Redis's
// listpack does, so HGETALL/HKEYS/HVALS answer in Redis's order and a lock library's
// one-field hash costs one small allocation; past either bound the hash converts (for good,
// as in Redis) to an open-addressing map.
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <tsl/robin_map.h>

#include "store/object.h"

namespace latch::store {

class HashValue final : public Container {
 public:
  static constexpr std::size_t kSmallEntries = 128;  // Redis's hash-max-listpack-entries
  static constexpr std::size_t kSmallBytes = 64;     // Redis's hash-max-listpack-value

  static constexpr ObjectType kType = ObjectType::kHash;
  ObjectType type() const override { return kType; }
  std::unique_ptr<Container> Clone() const override;
  std::size_t size() const { return big_ ? big_->size() : small_.size(); }
  bool small() const { return big_ == nullptr; }

  // The field's value, or nullptr. Valid until the next change.
  const std::string* Get(std::string_view field) const;
  // Sets field to value; true when the field is new.
  bool Set(std::string_view field, std::string_view value);
  // True when the field existed.
  bool Erase(std::string_view field);

  // fn(field, value) for every field, in insertion order while small.
  template <class Fn>
  void ForEach(Fn&& fn) const {
    if (big_) {
      for (const auto& [f, v] : *big_) fn(std::string_view(f), std::string_view(v));
    } else {
      for (const auto& [f, v] : small_) fn(std::string_view(f), std::string_view(v));
    }
  }

 private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const;
  };
  struct Eq {
    using is_transparent = void;
    bool operator()(std::string_view a, std::string_view b) const { return a == b; }
  };
  using Map = tsl::robin_map<std::string, std::string, Hash, Eq>;
  void ConvertToMap();

  std::vector<std::pair<std::string, std::string>> small_;
  std::unique_ptr<Map> big_;
};

}  // namespace latch::store
