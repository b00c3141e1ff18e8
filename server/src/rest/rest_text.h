#pragma once
// What the REST endpoint's two argument readers (url_args.cpp, json_args.cpp) and its router
// share: one hex-digit reader (percent-encoding, JSON's \uXXXX) and the error of an argument
// over proto-max-bulk-len, spelled as a RESP client gets it for a bulk over the limit.

namespace latch::rest {

inline constexpr char kBulkTooLongError[] = "ERR Protocol error: invalid bulk length";

// 0-15 for a hex digit of either case, -1 for any other character.
inline int HexDigitValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace latch::rest
