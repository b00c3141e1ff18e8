// RESP request parsing with Redis 7.0's behaviour (processMultibulkBuffer,
// processInlineBuffer and sdssplitargs), checked byte for byte against redis-server 7.0.15.
//
// Two Redis details that look like accidents are kept on purpose, because clients see them:
// - Redis finds line ends with strchr() on a NUL-terminated buffer, so a NUL byte before
//   the '\r' of a "*<count>"/"$<len>" line, or before the '\n' of an inline request,
//   hides the line end: the request never completes and fails only once more than
//   kInlineMaxSize bytes are pending.
// - The byte after the '\r' of a header line and the two bytes after a bulk payload are
//   skipped without checking that they are "\n" / "\r\n".
#include "latch/protocol/request_parser.h"

#include <algorithm>
#include <climits>
#include <cstring>

#include "latch/protocol/int_parse.h"
#include "latch/protocol/split_args.h"

namespace latch::protocol {
namespace {

constexpr std::string_view kTooBigCount = "ERR Protocol error: too big mbulk count string";
constexpr std::string_view kBadCount = "ERR Protocol error: invalid multibulk length";
constexpr std::string_view kUnauthCount = "ERR Protocol error: unauthenticated multibulk length";
constexpr std::string_view kTooBigBulkHeader = "ERR Protocol error: too big bulk count string";
constexpr std::string_view kBadBulkLen = "ERR Protocol error: invalid bulk length";
constexpr std::string_view kUnauthBulkLen = "ERR Protocol error: unauthenticated bulk length";
constexpr std::string_view kTooBigInline = "ERR Protocol error: too big inline request";
constexpr std::string_view kUnbalanced = "ERR Protocol error: unbalanced quotes in request";

// The usual header line: 1 to 18 digits without a leading zero (or a lone "0") after the
// type byte at `p`, then '\r' and one more byte. Such a line holds no NUL and string2ll
// accepts it, so the general path would give the same result; anything else (signs, long
// numbers, junk, a partial line) returns nullptr and takes that path. Returns the position
// after the '\r' and the byte that follows it.
const char* FastHeader(const char* p, const char* end, std::int64_t* value) {
  const char* q = p + 1;
  if (end - q < 3) return nullptr;  // a digit, '\r', one more byte
  unsigned digit = static_cast<unsigned>(*q - '0');
  if (digit > 9) return nullptr;
  std::int64_t v = digit;
  ++q;
  if (digit != 0) {  // no leading zeros: "0" stands alone
    const char* limit = end - q > 17 ? q + 17 : end;
    while (q < limit && (digit = static_cast<unsigned>(*q - '0')) <= 9) {
      v = v * 10 + digit;
      ++q;
    }
  }
  if (end - q < 2 || *q != '\r') return nullptr;
  *value = v;
  return q + 2;
}

// The same on offsets for the resumable path: *cr is the offset of the line's '\r'.
bool FastHeader(std::string_view buf, std::size_t pos, std::size_t* cr, std::int64_t* value) {
  const char* next = FastHeader(buf.data() + pos, buf.data() + buf.size(), value);
  if (next == nullptr) return false;
  *cr = static_cast<std::size_t>(next - buf.data()) - 2;
  return true;
}

}  // namespace

RequestParser::Result RequestParser::Parse(std::string_view buf) {
  if (failed_) return Result::kError;
  consumed_ = 0;
  bytes_wanted_ = 0;
  if (!in_request_) {
    if (buf.empty()) return Result::kNeedMore;
    if (buf[0] == '*' && limits_.authenticated && ParseWholeMultibulk(buf)) {
      consumed_ = pos_;
      return Result::kCommand;
    }
    Reset();
    in_request_ = true;
    multibulk_ = buf[0] == '*';
  }
  return multibulk_ ? ParseMultibulk(buf) : ParseInline(buf);
}

bool RequestParser::FindLineEnd(std::string_view buf, char terminator, std::size_t* end) {
  if (line_blocked_ || scan_ >= buf.size()) return false;
  const char* from = buf.data() + scan_;
  const std::size_t n = buf.size() - scan_;
  const auto* hit = static_cast<const char*>(std::memchr(from, terminator, n));
  const std::size_t clean = hit != nullptr ? static_cast<std::size_t>(hit - from) : n;
  if (std::memchr(from, '\0', clean) != nullptr) {
    line_blocked_ = true;
    return false;
  }
  scan_ += clean;
  if (hit == nullptr) return false;
  *end = scan_;
  return true;
}


// The common case in one pass: the whole request is in `buf` and every header is a plain
// decimal without leading zeros that FastHeader accepts. Anything else (a partial
// request, a sign, a long or malformed number, a limit exceeded) returns false having
// changed nothing that Reset() does not reset, and the general, resumable path parses the
// request from its start, finding the same result or the exact error.
bool RequestParser::ParseWholeMultibulk(std::string_view buf) {
  const char* p = buf.data();
  const char* const end = p + buf.size();
  std::int64_t count = 0;
  p = FastHeader(p, end, &count);
  if (p == nullptr || count <= 0 || count > kFastMaxArgs) return false;
  args_.resize(static_cast<std::size_t>(count));
  for (std::string_view& arg : args_) {
    std::int64_t len = 0;
    if (p >= end || *p != '$' || (p = FastHeader(p, end, &len)) == nullptr ||
        len > limits_.max_bulk_len || end - p < len + 2) {  // payload + CRLF
      return false;
    }
    arg = std::string_view(p, static_cast<std::size_t>(len));
    p += len + 2;
  }
  pos_ = static_cast<std::size_t>(p - buf.data());
  return true;
}

RequestParser::Result RequestParser::ParseMultibulk(std::string_view buf) {
  if (multibulk_left_ < 0) {
    std::size_t cr = 0;
    std::int64_t count = 0;
    if (!FastHeader(buf, pos_, &cr, &count)) {
      if (!FindLineEnd(buf, '\r', &cr)) {
        return buf.size() - pos_ > kInlineMaxSize ? Fail(kTooBigCount) : Result::kNeedMore;
      }
      if (cr + 2 > buf.size()) return Result::kNeedMore;  // the byte after '\r' is skipped
      if (!ParseInt64(buf.substr(pos_ + 1, cr - pos_ - 1), &count)) return Fail(kBadCount);
    }
    if (count > INT_MAX) return Fail(kBadCount);
    if (!limits_.authenticated && count > kUnauthMaxMultibulk) return Fail(kUnauthCount);
    pos_ = scan_ = cr + 2;
    if (count <= 0) return Finish(Result::kEmpty);
    multibulk_left_ = count;
  }

  while (multibulk_left_ > 0) {
    if (bulk_len_ < 0) {
      std::size_t cr = 0;
      std::int64_t len = 0;
      if (buf.size() <= pos_ || buf[pos_] != '$' || !FastHeader(buf, pos_, &cr, &len)) {
        if (!FindLineEnd(buf, '\r', &cr)) {
          return buf.size() - pos_ > kInlineMaxSize ? Fail(kTooBigBulkHeader) : Result::kNeedMore;
        }
        if (cr + 2 > buf.size()) return Result::kNeedMore;
        if (buf[pos_] != '$') {
          // Redis replaces CR and LF in error texts with spaces.
          const char got = buf[pos_] == '\r' || buf[pos_] == '\n' ? ' ' : buf[pos_];
          std::string text = "ERR Protocol error: expected '$', got '";
          text += got;
          text += '\'';
          return Fail(text);
        }
        if (!ParseInt64(buf.substr(pos_ + 1, cr - pos_ - 1), &len)) return Fail(kBadBulkLen);
      }
      if (len < 0 || len > limits_.max_bulk_len) return Fail(kBadBulkLen);
      if (!limits_.authenticated && len > kUnauthMaxBulkLen) return Fail(kUnauthBulkLen);
      pos_ = cr + 2;
      bulk_len_ = len;
    }
    const std::size_t need = static_cast<std::size_t>(bulk_len_) + 2;  // payload + CRLF
    const std::size_t have = buf.size() - pos_;
    if (have < need) {
      bytes_wanted_ = need - have;
      return Result::kNeedMore;
    }
    spans_.emplace_back(pos_, static_cast<std::size_t>(bulk_len_));
    pos_ = scan_ = pos_ + need;
    bulk_len_ = -1;
    --multibulk_left_;
  }

  args_.clear();
  args_.reserve(spans_.size());  // one allocation for a request of a million arguments
  for (const auto& [offset, length] : spans_) args_.emplace_back(buf.data() + offset, length);
  return Finish(Result::kCommand);
}

RequestParser::Result RequestParser::ParseInline(std::string_view buf) {
  std::size_t newline = 0;
  if (!FindLineEnd(buf, '\n', &newline)) {
    return buf.size() > kInlineMaxSize ? Fail(kTooBigInline) : Result::kNeedMore;
  }
  std::size_t line_len = newline;
  if (line_len > 0 && buf[line_len - 1] == '\r') --line_len;
  if (!SplitArgs(buf.substr(0, line_len), &inline_args_)) return Fail(kUnbalanced);
  pos_ = newline + 1;
  if (inline_args_.empty()) return Finish(Result::kEmpty);
  args_.clear();
  for (const std::string& arg : inline_args_) args_.emplace_back(arg);
  return Finish(Result::kCommand);
}

RequestParser::Result RequestParser::Fail(std::string_view text) {
  failed_ = true;
  in_request_ = false;
  args_.clear();
  error_.assign(text);
  return Result::kError;
}

RequestParser::Result RequestParser::Finish(Result result) {
  consumed_ = pos_;
  in_request_ = false;
  if (result == Result::kEmpty) args_.clear();
  return result;
}

void RequestParser::Reset() {
  pos_ = 0;
  scan_ = 0;
  line_blocked_ = false;
  multibulk_left_ = -1;
  bulk_len_ = -1;
  spans_.clear();
  args_.clear();
}

}  // namespace latch::protocol
