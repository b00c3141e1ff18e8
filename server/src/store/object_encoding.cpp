#include "store/object_encoding.h"

#include <limits>

#include "latch/protocol/int_parse.h"
#include "store/hash_value.h"
#include "store/zset_value.h"

namespace latch::store {
namespace {
constexpr std::size_t kMaxIntLength = 20;     // digits of a long, and a sign
constexpr std::size_t kMaxEmbstrLength = 44;  // Redis's OBJ_ENCODING_EMBSTR_SIZE_LIMIT
constexpr std::int64_t kSharedIntegers = 10000;
constexpr std::size_t kListpackEntries = 128;  // Redis's zset-max-listpack-entries

bool IsLongInteger(std::string_view v, std::int64_t* n) {
  return v.size() <= kMaxIntLength && ParseInt64(v, n);
}
}  // namespace

std::string_view EncodingOf(const Object& o) {
  switch (o.type()) {
    case ObjectType::kString: {
      std::int64_t n = 0;
      if (IsLongInteger(o.value(), &n)) return "int";
      return o.value().size() <= kMaxEmbstrLength ? "embstr" : "raw";
    }
    // A small hash is a packed byte string as Redis's listpack is (same thresholds).
    case ObjectType::kHash:
      return static_cast<const HashValue*>(o.container())->small() ? "listpack" : "hashtable";
    // latchd's sorted set is a skip list at every size; the name is the one Redis would
    // answer for the same set by zset-max-listpack-entries (128), so clients that branch on
    // it behave as against Redis. (Redis also switches past 64-byte members.)
    case ObjectType::kZSet:
      return static_cast<const ZSetValue*>(o.container())->size() <= kListpackEntries ? "listpack"
                                                                                        : "skiplist";
  }
  return "raw";
}

std::int64_t RefcountOf(const Object& o) {
  std::int64_t n = 0;
  if (o.type() == ObjectType::kString && IsLongInteger(o.value(), &n) && n >= 0 &&
      n < kSharedIntegers) {
    return std::numeric_limits<std::int32_t>::max();  // Redis's OBJ_SHARED_REFCOUNT
  }
  return 1;
}

std::size_t MemoryUsageOf(const Object& o) {
  const std::size_t block = Object::BlockSize(o.key().size(), o.value().size(), o.token() != 0);
  return (block + 7) / 8 * 8 + sizeof(std::uint64_t);
}

}  // namespace latch::store
