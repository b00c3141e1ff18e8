#include "store/object_encoding.h"

#include <limits>

#include "latch/protocol/int_parse.h"

namespace latch::store {
namespace {
constexpr std::size_t kMaxIntLength = 20;     // digits of a long, and a sign
constexpr std::size_t kMaxEmbstrLength = 44;  // Redis's OBJ_ENCODING_EMBSTR_SIZE_LIMIT
constexpr std::int64_t kSharedIntegers = 10000;

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
