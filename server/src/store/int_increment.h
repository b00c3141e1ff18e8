#pragma once
// The one integer step of INCR, INCRBY, DECR, DECRBY and HINCRBY: the checked sum and the
// decimal text the store keeps for it.
#include <charconv>
#include <climits>
#include <cstdint>
#include <string_view>

namespace latch::store {

// cur + delta into *sum; false (and *sum untouched) when the sum leaves the int64 range,
// which Redis refuses with "increment or decrement would overflow".
inline bool AddWithoutOverflow(std::int64_t cur, std::int64_t delta, std::int64_t* sum) {
  if ((delta < 0 && cur < 0 && delta < LLONG_MIN - cur) ||
      (delta > 0 && cur > 0 && delta > LLONG_MAX - cur)) {
    return false;
  }
  *sum = cur + delta;
  return true;
}

// An int64 as the decimal text a string value or hash field stores; view() lives as long as
// this object.
class Int64Text {
 public:
  explicit Int64Text(std::int64_t v) {
    auto [end, ec] = std::to_chars(buf_, buf_ + sizeof(buf_), v);
    (void)ec;  // 24 bytes hold any int64
    len_ = static_cast<std::size_t>(end - buf_);
  }
  std::string_view view() const { return {buf_, len_}; }

 private:
  char buf_[24];
  std::size_t len_;
};

}  // namespace latch::store
