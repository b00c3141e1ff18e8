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
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "latch/protocol/limits.h"
#include "latch/protocol/reply.h"

namespace latch::protocol {

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

}  // namespace latch::protocol
