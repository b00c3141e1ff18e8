#include "reply_scanner.h"

#include <charconv>

namespace latch::bench {
namespace {

// Reads the line at buf[pos] (after its type byte) up to CRLF. Returns false if incomplete.
bool Line(std::string_view buf, std::size_t pos, std::string_view* line, std::size_t* next) {
  std::size_t end = buf.find("\r\n", pos);
  if (end == std::string_view::npos) return false;
  *line = buf.substr(pos, end - pos);
  *next = end + 2;
  return true;
}

bool Number(std::string_view s, std::int64_t* v) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
  return ec == std::errc() && p == s.data() + s.size();
}

}  // namespace

std::ptrdiff_t ScanReply(std::string_view buf, ScannedReply* out) {
  std::size_t pos = 0;
  std::int64_t pending = 1;  // replies still to skip (aggregates add their elements)
  bool top = true;
  // Every iteration consumes at least one line, so the loop ends within buf.size() steps.
  while (pending > 0) {
    if (pos >= buf.size()) return 0;
    const char type = buf[pos];
    std::string_view line;
    std::size_t next = 0;
    if (!Line(buf, pos + 1, &line, &next)) return 0;
    --pending;
    std::int64_t n = 0;
    switch (type) {
      case '+':
      case ',':
      case '#':
      case '(':
        if (top) out->cls = ReplyClass::kOk;
        break;
      case '_':
        if (top) out->cls = ReplyClass::kNil;
        break;
      case '-':
        if (top) {
          out->cls = ReplyClass::kError;
          out->error = line;
        }
        break;
      case ':':
        if (!Number(line, &n)) return -1;
        if (top) {
          out->integer = n;
          out->cls = n > 0 ? ReplyClass::kOk : ReplyClass::kZero;
        }
        break;
      case '$':
      case '=':
      case '!':
        if (!Number(line, &n)) return -1;
        if (n >= 0) {
          if (buf.size() < next + static_cast<std::size_t>(n) + 2) return 0;
          next += static_cast<std::size_t>(n) + 2;
        }
        if (top) out->cls = n < 0 ? ReplyClass::kNil
                                  : (type == '!' ? ReplyClass::kError : ReplyClass::kOk);
        break;
      case '*':
      case '~':
      case '>':
      case '%':
        if (!Number(line, &n)) return -1;
        if (top) out->cls = n < 0 ? ReplyClass::kNil : n == 0 ? ReplyClass::kZero
                                                               : ReplyClass::kOk;
        if (n > 0) pending += type == '%' ? 2 * n : n;
        break;
      default:
        return -1;
    }
    top = false;
    pos = next;
  }
  return static_cast<std::ptrdiff_t>(pos);
}

}  // namespace latch::bench
