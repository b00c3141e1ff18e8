#pragma once
// The load generator's reply reader: finds where one top-level RESP2/RESP3 reply ends and
// classifies it, without copying or allocating (protocol::ReplyReader builds owned trees,
// which costs the client CPU the benchmark is short of). Nested aggregates are skipped with
// a counter, not recursion.
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace latch::bench {

enum class ReplyClass {
  kOk,     // +OK/+anything, a bulk string, an integer > 0, a non-empty aggregate
  kNil,    // $-1, *-1, _
  kZero,   // an integer <= 0 (a refused compare-and-delete), an empty aggregate
  kError,  // -ERR ...
};

struct ScannedReply {
  ReplyClass cls = ReplyClass::kNil;
  std::int64_t integer = 0;
  std::string_view error;  // the error line without '-' (points into the scanned buffer)
};

// Returns the length of the first complete reply in buf (filling *out), 0 when more bytes
// are needed, or -1 when the stream is not RESP.
std::ptrdiff_t ScanReply(std::string_view buf, ScannedReply* out);

}  // namespace latch::bench
