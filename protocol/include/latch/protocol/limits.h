#pragma once
// Protocol limits, with Redis's values and meaning.
#include <cstddef>
#include <cstdint>

namespace latch::protocol {

// Longest inline request, and longest "*<count>" / "$<len>" line, before the
// parser gives up (Redis: PROTO_INLINE_MAX_SIZE).
inline constexpr std::size_t kInlineMaxSize = 64 * 1024;
// Redis's proto-max-bulk-len default (512mb).
inline constexpr std::int64_t kDefaultMaxBulkLen = 512LL * 1024 * 1024;
// Before AUTH (when a password is required) a request may have at most this
// many arguments, each at most kUnauthMaxBulkLen bytes.
inline constexpr std::int64_t kUnauthMaxMultibulk = 10;
inline constexpr std::int64_t kUnauthMaxBulkLen = 16384;

}  // namespace latch::protocol
