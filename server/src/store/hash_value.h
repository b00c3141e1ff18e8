#pragma once
// A hash's value: field -> value. Small hashes (at most kSmallEntries fields, each field and
// value at most kSmallBytes) are one byte string of entries [len][field][len][value] in
// insertion order, as Redis's listpack: HGETALL/HKEYS/HVALS answer in Redis's order and a
// lock library's one-field hash costs one small allocation. Past either bound the hash
// converts (for good, as in Redis) to an open-addressing set of entries, each one malloc'd
// block holding both lengths, the field and the value.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include <tsl/robin_set.h>

#include "store/object.h"

namespace latch::store {

class HashValue final : public Container {
 public:
  static constexpr std::size_t kSmallEntries = 128;  // Redis's hash-max-listpack-entries
  static constexpr std::size_t kSmallBytes = 64;     // Redis's hash-max-listpack-value
  static constexpr ObjectType kType = ObjectType::kHash;

  HashValue() = default;
  ~HashValue() override;
  HashValue(const HashValue&) = delete;
  HashValue& operator=(const HashValue&) = delete;

  ObjectType type() const override { return kType; }
  std::unique_ptr<Container> Clone() const override;
  std::size_t size() const { return big_ ? big_->size() : small_count_; }
  bool small() const { return big_ == nullptr; }

  // The field's value into *value (valid until the next change); false when absent.
  bool Get(std::string_view field, std::string_view* value) const;
  bool Has(std::string_view field) const {
    std::string_view v;
    return Get(field, &v);
  }
  // Sets field to value; true when the field is new.
  bool Set(std::string_view field, std::string_view value);
  // True when the field existed.
  bool Erase(std::string_view field);

  // fn(field, value) for every field, in insertion order while small.
  template <class Fn>
  void ForEach(Fn&& fn) const {
    if (big_) {
      for (const Entry* e : *big_) fn(e->field(), e->value());
      return;
    }
    for (std::size_t pos = 0; pos < small_.size();) {
      const SmallEntry e = SmallAt(pos);
      fn(e.field, e.value);
      pos = e.end;
    }
  }

 private:
  struct Entry {
    std::uint32_t flen, vlen;
    std::string_view field() const { return {reinterpret_cast<const char*>(this + 1), flen}; }
    std::string_view value() const {
      return {reinterpret_cast<const char*>(this + 1) + flen, vlen};
    }
  };
  struct EntryHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view f) const;
    std::size_t operator()(const Entry* e) const { return (*this)(e->field()); }
  };
  struct EntryEq {
    using is_transparent = void;
    static std::string_view F(std::string_view f) { return f; }
    static std::string_view F(const Entry* e) { return e->field(); }
    template <class A, class B>
    bool operator()(const A& a, const B& b) const { return F(a) == F(b); }
  };
  using Map = tsl::robin_set<Entry*, EntryHash, EntryEq>;
  struct SmallEntry {
    std::string_view field, value;
    std::size_t begin, end;  // byte range of the entry in small_
  };

  static Entry* NewEntry(std::string_view field, std::string_view value);
  SmallEntry SmallAt(std::size_t pos) const;
  // The entry of `field` in small_, or false.
  bool FindSmall(std::string_view field, SmallEntry* out) const;
  void ConvertToMap();

  std::string small_;  // [u8 flen][field][u8 vlen][value]...
  std::size_t small_count_ = 0;
  std::unique_ptr<Map> big_;
};

}  // namespace latch::store
