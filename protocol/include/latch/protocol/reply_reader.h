#pragma once
// Client side of RESP: an incremental reader of server replies (RESP2 and RESP3), in the
// manner of hiredis's reader: feed bytes as they arrive, take whole replies out.
//
// Contract:
// - Feed() copies the bytes; the caller's buffer may be reused at once.
// - Next() returns kReply with one complete top-level reply, kNeedMore when the buffered
//   bytes hold no complete reply yet, or kError once the stream is malformed. The error is
//   sticky: every later call returns kError and error() keeps the first message. A client
//   must then close the connection (the stream cannot be resynchronised).
// - Work is resumable: aggregate elements already parsed are kept between calls, a partial
//   line is not rescanned from its start, and a bulk body is only copied once complete.
// - No recursion: nesting is tracked on an explicit stack bounded by max_depth; bulk lengths,
//   aggregate sizes and line lengths are bounded so a hostile server cannot make the reader
//   allocate without limit before the bytes have arrived.
// - RESP3 push replies ('>') are returned like any other reply (type kPush) so the caller can
//   route them away from its request queue. Attributes ('|') are skipped unless
//   keep_attributes is set, in which case they are attached to the reply that follows them.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "latch/protocol/limits.h"

namespace latch::protocol {

enum class ReplyType : std::uint8_t {
  kSimpleString,  // +OK
  kError,         // -ERR ... and RESP3 blob errors (!len)
  kInteger,       // :1
  kBulkString,    // $3 foo
  kNull,          // $-1, *-1, _
  kArray,         // *n
  kMap,           // %n (elements hold key, value, key, value, ...)
  kSet,           // ~n
  kDouble,        // ,3.14 | ,inf | ,-inf | ,nan
  kBoolean,       // #t | #f
  kBigNumber,     // (1234567890123456789012 (digits kept as text in str)
  kVerbatim,      // =15 txt:Some string (format in verbatim_format, text in str)
  kPush,          // >n out-of-band data (pub/sub, client tracking)
};

std::string_view ReplyTypeName(ReplyType type);

// One reply, owning all its data. Aggregates own their elements.
struct Reply {
  ReplyType type = ReplyType::kNull;
  bool boolean = false;
  std::array<char, 3> verbatim_format{};
  std::int64_t integer = 0;
  double number = 0;              // kDouble
  std::string str;                // simple, error, bulk, verbatim text, big number, double text
  std::vector<Reply> elements;    // array, set, push; map: key, value, key, value, ...
  std::vector<Reply> attributes;  // key, value pairs of a preceding RESP3 attribute, if kept

  static Reply Simple(std::string s);
  static Reply Error(std::string s);
  static Reply Integer(std::int64_t v);
  static Reply Bulk(std::string s);
  static Reply Nil() { return Reply{}; }
  static Reply Aggregate(ReplyType type, std::vector<Reply> elements);

  bool is_null() const { return type == ReplyType::kNull; }
  bool is_error() const { return type == ReplyType::kError; }
  bool is_integer() const { return type == ReplyType::kInteger; }
  // Simple, bulk and verbatim strings: the ones whose text is in str.
  bool is_string() const {
    return type == ReplyType::kSimpleString || type == ReplyType::kBulkString ||
           type == ReplyType::kVerbatim;
  }
  bool is_aggregate() const {
    return type == ReplyType::kArray || type == ReplyType::kMap || type == ReplyType::kSet ||
           type == ReplyType::kPush;
  }
  // Map lookup by string key (linear: maps in replies are small). Null when absent or when
  // this reply is not a map (a RESP2 flat array of pairs counts as a map here).
  const Reply* Find(std::string_view key) const;

  // A redis-cli-like rendering for logs, tests and latch-cli.
  std::string ToString() const;

  bool operator==(const Reply& other) const = default;
};

struct ReplyReaderLimits {
  std::size_t max_depth = 32;                      // nested aggregates, top level counts as 1
  std::int64_t max_bulk_len = kDefaultMaxBulkLen;  // per bulk / verbatim / blob error
  std::int64_t max_elements = (1LL << 32) - 1;     // per aggregate (a map counts 2 per pair)
  std::size_t max_line = kInlineMaxSize;           // simple strings, errors, number lines
  bool keep_attributes = false;
};

class ReplyReader {
 public:
  enum class Status { kReply, kNeedMore, kError };

  ReplyReader() = default;
  explicit ReplyReader(ReplyReaderLimits limits) : limits_(limits) {}

  void Feed(std::string_view bytes);
  Status Next(Reply* out);

  bool failed() const { return !error_.empty(); }
  // "Protocol error: ..." once failed, empty before.
  const std::string& error() const { return error_; }
  // Bytes fed but not yet consumed by a complete item.
  std::size_t buffered() const { return buf_.size() - pos_; }

 private:
  struct Frame {
    Reply reply;
    std::int64_t left = 0;  // elements still expected
    bool is_attribute = false;
  };
  enum class Item { kDone, kOpened, kNeedMore, kError };

  Item ParseItem(Reply* item);
  Item ParseBulk(char type, std::int64_t len, std::size_t body, Reply* item);
  Item OpenAggregate(char type, std::int64_t n, std::size_t next);
  // Places a finished item into its parent; true when a whole top-level reply is done.
  bool Place(Reply item, Reply* out);
  Status Fail(std::string message);
  void Compact();

  ReplyReaderLimits limits_;
  std::string buf_;
  std::size_t pos_ = 0;   // first unconsumed byte
  std::size_t scan_ = 0;  // where the search for the current line's CRLF resumes
  std::vector<Frame> stack_;
  std::vector<Reply> pending_attributes_;
  std::string error_;
};

// Appends a request as a RESP multibulk ("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n").
void AppendMultibulkHeader(std::string* out, std::size_t argc);
void AppendBulkArgument(std::string* out, std::string_view arg);

}  // namespace latch::protocol
