#pragma once
// A key as the Op layer receives it: its bytes, its 64-bit hash (computed once, by the
// dispatcher, from the command's key positions) and the shard that hash picks. The view
// lives as long as the command's arguments.
#include <cstdint>
#include <string_view>

namespace latch::store {

class Shard;

struct KeyRef {
  std::string_view key;
  std::uint64_t hash = 0;
  Shard* shard = nullptr;
};

}  // namespace latch::store
