#pragma once
// Finds where one RESP2/RESP3 reply ends in a byte buffer, without decoding it, so that a
// test can read exactly one reply and compare its raw bytes. Handles nested aggregates
// iteratively (no recursion) with a depth limit; attributes and streamed strings are not
// needed by any test and are reported as malformed.
#include <cstddef>
#include <string>
#include <string_view>

namespace latch::test {

struct RespFrame {
  enum class Status { kComplete, kIncomplete, kMalformed };
  Status status = Status::kIncomplete;
  std::size_t length = 0;  // bytes of the first reply when kComplete
  std::string error;       // what is wrong when kMalformed
};

// Looks at the start of `buffer` (which must begin at a reply boundary).
RespFrame FrameReply(std::string_view buffer);

}  // namespace latch::test
