#include "support/resp_frame.h"

#include <charconv>
#include <cstdint>
#include <vector>

namespace latch::test {
namespace {

constexpr std::size_t kMaxDepth = 64;

RespFrame Malformed(std::string error) {
  RespFrame frame;
  frame.status = RespFrame::Status::kMalformed;
  frame.error = std::move(error);
  return frame;
}

bool ParseLength(std::string_view digits, std::int64_t* out) {
  if (digits.empty()) return false;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), *out);
  return ec == std::errc() && end == digits.data() + digits.size();
}

}  // namespace

RespFrame FrameReply(std::string_view buffer) {
  // Elements still expected by each open aggregate, innermost last.
  std::vector<std::int64_t> pending;
  std::size_t pos = 0;
  while (true) {
    if (pos >= buffer.size()) return {};
    std::size_t eol = buffer.find("\r\n", pos);
    if (eol == std::string_view::npos) return {};
    const char type = buffer[pos];
    std::string_view line = buffer.substr(pos + 1, eol - pos - 1);
    std::size_t next = eol + 2;
    std::int64_t children = 0;  // elements this item opens (aggregates only)
    switch (type) {
      case '+':
      case '-':
      case ':':
      case ',':
      case '#':
      case '(':
      case '_':
        break;
      case '$':
      case '!':
      case '=': {
        std::int64_t len = 0;
        if (!ParseLength(line, &len) || len < -1) {
          return Malformed("bad bulk length '" + std::string(line) + "'");
        }
        if (len >= 0) {
          if (buffer.size() < next + static_cast<std::size_t>(len) + 2) return {};
          next += static_cast<std::size_t>(len);
          if (buffer.substr(next, 2) != "\r\n") return Malformed("bulk not ended by CRLF");
          next += 2;
        }
        break;
      }
      case '*':
      case '~':
      case '>':
      case '%': {
        std::int64_t count = 0;
        if (!ParseLength(line, &count) || count < -1) {
          return Malformed("bad aggregate length '" + std::string(line) + "'");
        }
        if (count > 0) children = type == '%' ? count * 2 : count;
        break;
      }
      default:
        return Malformed(std::string("unknown reply type '") + type + "'");
    }
    pos = next;
    if (children > 0) {
      if (pending.size() >= kMaxDepth) return Malformed("reply nested too deeply");
      pending.push_back(children);
      continue;
    }
    // One item finished: close every aggregate it completes.
    while (!pending.empty() && --pending.back() == 0) pending.pop_back();
    if (pending.empty()) {
      RespFrame frame;
      frame.status = RespFrame::Status::kComplete;
      frame.length = pos;
      return frame;
    }
  }
}

}  // namespace latch::test
