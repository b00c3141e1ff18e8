#pragma once
// Incremental parser of client requests: RESP multibulk ("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n")
// and inline commands ("GET k\r\n", "GET k\n", quoted arguments as redis-cli sends them).
//
// Contract:
// - The caller keeps the unconsumed bytes in one contiguous buffer and passes, on every
//   call, the bytes starting at the first byte of the request being parsed (it may hold
//   more requests after it). Bytes already passed must be passed again unchanged (the
//   buffer may move in memory between calls: the parser keeps offsets, not pointers).
// - Work is resumable: a request arriving one byte per read is parsed in O(total bytes),
//   never rescanned from its start.
// - kCommand: args() views point into the buffer given to that call and stay valid until
//   the caller changes or moves those bytes; consumed() bytes belong to this request.
//   The next Parse() call starts a new request.
// - kEmpty: consumed() bytes held no command (an empty inline line, "*0\r\n", "*-1\r\n");
//   skip them and call again.
// - kError: error() is the exact Redis error text without the leading '-' and the CRLF
//   (e.g. "ERR Protocol error: invalid bulk length"). The connection must reply with
//   it and close; the parser must not be used again.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "latch/protocol/limits.h"

namespace latch::protocol {

struct ParserLimits {
  std::int64_t max_bulk_len = kDefaultMaxBulkLen;  // proto-max-bulk-len
  // false while a password is required and the client has not authenticated: then
  // multibulk counts over kUnauthMaxMultibulk and bulk lengths over kUnauthMaxBulkLen
  // are protocol errors, as in Redis.
  bool authenticated = true;
};

class RequestParser {
 public:
  enum class Result { kNeedMore, kCommand, kEmpty, kError };

  RequestParser() = default;
  explicit RequestParser(ParserLimits limits) : limits_(limits) {}

  void set_limits(ParserLimits limits) { limits_ = limits; }
  const ParserLimits& limits() const { return limits_; }

  Result Parse(std::string_view buf);

  std::size_t consumed() const { return consumed_; }
  std::span<const std::string_view> args() const { return args_; }
  const std::string& error() const { return error_; }

  // Bytes the current partial request still needs at least (0 if unknown). Lets the
  // connection size its next read for large bulk arguments.
  std::size_t bytes_wanted() const { return bytes_wanted_; }

 private:
  // Requests with more arguments than this always take the general path.
  static constexpr std::int64_t kFastMaxArgs = 1024;
  bool ParseWholeMultibulk(std::string_view buf);
  Result ParseMultibulk(std::string_view buf);
  Result ParseInline(std::string_view buf);
  // Looks for `terminator` from scan_ on, the way Redis's strchr() does on its
  // NUL-terminated query buffer: a NUL byte before it hides it for good. Remembers how
  // far it looked, so a line arriving byte by byte is scanned once.
  bool FindLineEnd(std::string_view buf, char terminator, std::size_t* end);
  Result Fail(std::string_view text);
  Result Finish(Result result);
  void Reset();

  ParserLimits limits_;
  bool failed_ = false;
  // Progress through the current request (offsets from its first byte).
  bool in_request_ = false;
  bool multibulk_ = false;
  std::size_t pos_ = 0;               // start of the line or bulk being read
  std::size_t scan_ = 0;              // bytes before this hold no terminator and no NUL
  bool line_blocked_ = false;         // a NUL precedes the terminator: the line never ends
  std::int64_t multibulk_left_ = -1;  // arguments still to read, -1 before the count line
  std::int64_t bulk_len_ = -1;        // length of the argument being read, -1 before its header
  std::vector<std::pair<std::size_t, std::size_t>> spans_;  // (offset, length) per argument
  std::vector<std::string> inline_args_;  // inline arguments after unquoting (owned)
  std::vector<std::string_view> args_;
  std::size_t consumed_ = 0;
  std::size_t bytes_wanted_ = 0;
  std::string error_;
};

}  // namespace latch::protocol
