#include "latch/protocol/reply_reader.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <utility>

namespace latch::protocol {
namespace {

// Signed decimal: optional '-', at least one digit, nothing else, no overflow. Not
// latch::ParseInt64 (int_parse.h): this one also takes leading zeros ("007", "-0", and so
// more than 20 characters), which string2ll refuses; switching would change what the
// reader accepts, so it stays until that is wanted.
bool ParseInt64(std::string_view s, std::int64_t* out) {
  if (s.empty() || s.front() == '+') return false;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

bool ParseDouble(std::string_view s, double* out) {
  if (s == "inf" || s == "+inf") {
    *out = HUGE_VAL;
    return true;
  }
  if (s == "-inf") {
    *out = -HUGE_VAL;
    return true;
  }
  if (s == "nan" || s == "-nan") {
    *out = std::nan("");
    return true;
  }
  if (s.empty() || s.front() == '+') return false;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

bool IsBigNumber(std::string_view s) {
  if (!s.empty() && s.front() == '-') s.remove_prefix(1);
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string Printable(char c) {
  if (c >= 0x20 && c < 0x7f) return std::string(1, c);
  char buf[8];
  std::snprintf(buf, sizeof(buf), "\\x%02x", static_cast<unsigned char>(c));
  return buf;
}

}  // namespace

void ReplyReader::Feed(std::string_view bytes) {
  if (failed()) return;
  Compact();
  buf_.append(bytes);
}

void ReplyReader::Compact() {
  if (pos_ == buf_.size()) {
    buf_.clear();
    scan_ = 0;
    pos_ = 0;
  } else if (pos_ > 4096 && pos_ * 2 > buf_.size()) {
    buf_.erase(0, pos_);
    scan_ -= std::min(scan_, pos_);
    pos_ = 0;
  }
}

ReplyReader::Status ReplyReader::Fail(std::string message) {
  error_ = "Protocol error: " + std::move(message);
  stack_.clear();
  pending_attributes_.clear();
  buf_.clear();
  pos_ = scan_ = 0;
  return Status::kError;
}

ReplyReader::Status ReplyReader::Next(Reply* out) {
  if (failed()) return Status::kError;
  // Every iteration consumes at least one header line or returns, so the loop is bounded
  // by the buffered bytes.
  for (;;) {
    Reply item;
    switch (ParseItem(&item)) {
      case Item::kNeedMore:
        return Status::kNeedMore;
      case Item::kError:
        return Status::kError;
      case Item::kOpened:
        continue;
      case Item::kDone:
        if (Place(std::move(item), out)) {
          Compact();
          return Status::kReply;
        }
        continue;
    }
  }
}

bool ReplyReader::Place(Reply item, Reply* out) {
  // Walk up through every aggregate this item completes (iteratively, no recursion).
  for (;;) {
    if (stack_.empty()) {
      *out = std::move(item);
      return true;
    }
    Frame& top = stack_.back();
    top.reply.elements.push_back(std::move(item));
    if (--top.left > 0) return false;
    Frame done = std::move(top);
    stack_.pop_back();
    if (done.is_attribute) {
      // An attribute describes the next item; it is not an element of its parent.
      if (limits_.keep_attributes) {
        for (auto& e : done.reply.elements) pending_attributes_.push_back(std::move(e));
      }
      return false;
    }
    item = std::move(done.reply);
  }
}

ReplyReader::Item ReplyReader::OpenAggregate(char type, std::int64_t n, std::size_t next) {
  if (type == '*' && n == -1) return Item::kDone;  // null array; caller sets kNull
  if (n < 0) {
    Fail("invalid aggregate length");
    return Item::kError;
  }
  bool pairs = type == '%' || type == '|';
  if (n > (pairs ? limits_.max_elements / 2 : limits_.max_elements)) {
    Fail("aggregate length over the limit");
    return Item::kError;
  }
  pos_ = next;
  scan_ = next;
  if (n == 0) return Item::kDone;
  if (stack_.size() + 1 > limits_.max_depth) {
    Fail("nesting deeper than " + std::to_string(limits_.max_depth));
    return Item::kError;
  }
  Frame frame;
  frame.left = pairs ? n * 2 : n;
  frame.is_attribute = type == '|';
  switch (type) {
    case '*':
      frame.reply.type = ReplyType::kArray;
      break;
    case '%':
      frame.reply.type = ReplyType::kMap;
      break;
    case '|':
      frame.reply.type = ReplyType::kMap;
      break;
    case '~':
      frame.reply.type = ReplyType::kSet;
      break;
    default:
      frame.reply.type = ReplyType::kPush;
      break;
  }
  // Reserve only what a small reply needs: the length is a claim, not bytes received.
  frame.reply.elements.reserve(static_cast<std::size_t>(std::min<std::int64_t>(frame.left, 64)));
  if (!frame.is_attribute) frame.reply.attributes = std::move(pending_attributes_);
  pending_attributes_.clear();
  stack_.push_back(std::move(frame));
  return Item::kOpened;
}

ReplyReader::Item ReplyReader::ParseBulk(char type, std::int64_t len, std::size_t body,
                                         Reply* item) {
  if (type == '$' && len == -1) {
    pos_ = scan_ = body;
    return Item::kDone;  // null bulk; item stays kNull
  }
  if (len < 0 || len > limits_.max_bulk_len) {
    Fail(len < 0 ? "invalid bulk length" : "bulk length over the limit");
    return Item::kError;
  }
  std::size_t n = static_cast<std::size_t>(len);
  if (buf_.size() - body < n + 2) return Item::kNeedMore;  // header is re-read, body is not
  if (buf_[body + n] != '\r' || buf_[body + n + 1] != '\n') {
    Fail("bulk string not terminated by CRLF");
    return Item::kError;
  }
  std::string_view data(buf_.data() + body, n);
  if (type == '=') {
    if (n < 4 || data[3] != ':') {
      Fail("verbatim string without a format prefix");
      return Item::kError;
    }
    item->type = ReplyType::kVerbatim;
    std::copy_n(data.begin(), 3, item->verbatim_format.begin());
    item->str.assign(data.substr(4));
  } else {
    item->type = type == '!' ? ReplyType::kError : ReplyType::kBulkString;
    item->str.assign(data);
  }
  pos_ = scan_ = body + n + 2;
  return Item::kDone;
}

ReplyReader::Item ReplyReader::ParseItem(Reply* item) {
  if (pos_ == buf_.size()) return Item::kNeedMore;
  std::size_t from = std::max(scan_, pos_ + 1);
  std::size_t cr = buf_.find('\r', from);
  // Resume the next search where this one stopped (a lone trailing '\r' is searched again).
  while (cr != std::string::npos && cr + 1 < buf_.size() && buf_[cr + 1] != '\n') {
    cr = buf_.find('\r', cr + 1);
  }
  if (cr == std::string::npos || cr + 1 >= buf_.size()) {
    std::size_t line_len = buf_.size() - pos_ - 1;
    if (line_len > limits_.max_line) {
      Fail("reply line too long");
      return Item::kError;
    }
    scan_ = cr == std::string::npos ? buf_.size() : cr;
    return Item::kNeedMore;
  }
  if (cr - pos_ - 1 > limits_.max_line) {
    Fail("reply line too long");
    return Item::kError;
  }
  char type = buf_[pos_];
  std::string_view line(buf_.data() + pos_ + 1, cr - pos_ - 1);
  std::size_t next = cr + 2;
  Item result = Item::kDone;
  std::int64_t n = 0;
  switch (type) {
    case '+':
      item->type = ReplyType::kSimpleString;
      item->str.assign(line);
      break;
    case '-':
      item->type = ReplyType::kError;
      item->str.assign(line);
      break;
    case ':':
      if (!ParseInt64(line, &item->integer)) {
        Fail("invalid integer '" + std::string(line) + "'");
        return Item::kError;
      }
      item->type = ReplyType::kInteger;
      break;
    case '$':
    case '=':
    case '!':
      if (!ParseInt64(line, &n)) {
        Fail("invalid bulk length");
        return Item::kError;
      }
      result = ParseBulk(type, n, next, item);
      if (result != Item::kDone) return result;
      next = pos_;
      break;
    case '*':
    case '%':
    case '~':
    case '>':
    case '|':
      if (!ParseInt64(line, &n)) {
        Fail("invalid aggregate length");
        return Item::kError;
      }
      result = OpenAggregate(type, n, next);
      if (result != Item::kDone) return result;
      if (n > 0 || (type == '*' && n == -1)) break;  // null array: item stays kNull
      // An empty aggregate is a finished item.
      item->type = type == '%' || type == '|' ? ReplyType::kMap
                   : type == '~'              ? ReplyType::kSet
                   : type == '>'              ? ReplyType::kPush
                                              : ReplyType::kArray;
      if (type == '|') {
        pos_ = scan_ = next;
        return Item::kOpened;  // empty attribute: nothing to attach
      }
      break;
    case '_':
      if (!line.empty()) {
        Fail("invalid null");
        return Item::kError;
      }
      break;
    case ',':
      if (!ParseDouble(line, &item->number)) {
        Fail("invalid double '" + std::string(line) + "'");
        return Item::kError;
      }
      item->type = ReplyType::kDouble;
      item->str.assign(line);
      break;
    case '#':
      if (line != "t" && line != "f") {
        Fail("invalid boolean");
        return Item::kError;
      }
      item->type = ReplyType::kBoolean;
      item->boolean = line == "t";
      break;
    case '(':
      if (!IsBigNumber(line)) {
        Fail("invalid big number");
        return Item::kError;
      }
      item->type = ReplyType::kBigNumber;
      item->str.assign(line);
      break;
    default:
      Fail("invalid reply type byte '" + Printable(type) + "'");
      return Item::kError;
  }
  pos_ = scan_ = next;
  item->attributes = std::move(pending_attributes_);
  pending_attributes_.clear();
  return Item::kDone;
}

}  // namespace latch::protocol
