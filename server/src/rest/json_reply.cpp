#include "rest/json_reply.h"

#include <cmath>
#include <cstdio>

namespace latch::rest {
namespace {

using protocol::Reply;
using protocol::ReplyType;

// Length of the valid UTF-8 sequence starting at s[i], or 0 when it is not one (overlong
// forms, surrogates and code points past U+10FFFF are invalid, as in RFC 3629).
std::size_t Utf8Length(std::string_view s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = b(0);
  const std::size_t left = s.size() - i;
  const auto cont = [&](std::size_t k) { return k < left && (b(k) & 0xC0) == 0x80; };
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!cont(1) || !cont(2)) return 0;
    if (c == 0xE0 && b(1) < 0xA0) return 0;   // overlong
    if (c == 0xED && b(1) >= 0xA0) return 0;  // surrogate
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    if (c == 0xF0 && b(1) < 0x90) return 0;   // overlong
    if (c == 0xF4 && b(1) >= 0x90) return 0;  // past U+10FFFF
    return 4;
  }
  return 0;
}

void AppendString(std::string_view s, Encoding encoding, std::string* out) {
  if (encoding == Encoding::kPlain) return AppendJsonString(s, out);
  out->push_back('"');
  AppendBase64(s, out);
  out->push_back('"');
}

void AppendDouble(const Reply& r, Encoding encoding, std::string* out) {
  if (!std::isfinite(r.number)) return AppendString(r.str, encoding, out);  // inf, nan
  char buf[32];
  const int n = std::snprintf(buf, sizeof buf, "%.17g", r.number);
  out->append(buf, static_cast<std::size_t>(n));
}

}  // namespace

void AppendJsonString(std::string_view s, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->push_back('"');
  out->reserve(out->size() + s.size() + 1);
  std::size_t i = 0;
  while (i < s.size()) {
    // A run of bytes that stand for themselves is appended at once (a value of megabytes is
    // mostly that).
    std::size_t run = i;
    while (run < s.size()) {
      const unsigned char b = static_cast<unsigned char>(s[run]);
      if (b < 0x20 || b == '"' || b == '\\' || b >= 0x80) break;
      ++run;
    }
    if (run > i) {
      out->append(s.data() + i, run - i);
      i = run;
      if (i == s.size()) break;
    }
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      const std::size_t n = Utf8Length(s, i);
      if (n == 0) {
        out->append("\xEF\xBF\xBD");  // U+FFFD
        ++i;
      } else {
        out->append(s.substr(i, n));
        i += n;
      }
      continue;
    }
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      case '\b':
        out->append("\\b");
        break;
      case '\f':
        out->append("\\f");
        break;
      default:
        if (c < 0x20) {
          out->append("\\u00");
          out->push_back(kHex[c >> 4]);
          out->push_back(kHex[c & 15]);
        } else {
          out->push_back(static_cast<char>(c));
        }
    }
    ++i;
  }
  out->push_back('"');
}

void AppendBase64(std::string_view bytes, std::string* out) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  out->reserve(out->size() + (bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  const auto at = [&](std::size_t k) { return static_cast<unsigned char>(bytes[k]); };
  for (; i + 3 <= bytes.size(); i += 3) {
    const unsigned v = (at(i) << 16) | (at(i + 1) << 8) | at(i + 2);
    out->push_back(kAlphabet[(v >> 18) & 63]);
    out->push_back(kAlphabet[(v >> 12) & 63]);
    out->push_back(kAlphabet[(v >> 6) & 63]);
    out->push_back(kAlphabet[v & 63]);
  }
  const std::size_t rest = bytes.size() - i;
  if (rest == 0) return;
  const unsigned v = (at(i) << 16) | (rest == 2 ? at(i + 1) << 8 : 0);
  out->push_back(kAlphabet[(v >> 18) & 63]);
  out->push_back(kAlphabet[(v >> 12) & 63]);
  out->push_back(rest == 2 ? kAlphabet[(v >> 6) & 63] : '=');
  out->push_back('=');
}

// Depth is bounded by the reader that built `reply` (ReplyReaderLimits::max_depth).
void AppendJsonValue(const Reply& reply, Encoding encoding, bool whole_result, std::string* out) {
  switch (reply.type) {
    case ReplyType::kNull:
      out->append("null");
      return;
    case ReplyType::kInteger:
      out->append(std::to_string(reply.integer));
      return;
    case ReplyType::kBoolean:
      out->append(reply.boolean ? "1" : "0");  // as RESP2 shows it
      return;
    case ReplyType::kDouble:
      return AppendDouble(reply, encoding, out);
    case ReplyType::kSimpleString:
      if (whole_result && reply.str == "OK") {
        out->append("\"OK\"");
        return;
      }
      return AppendString(reply.str, encoding, out);
    case ReplyType::kError:
    case ReplyType::kBulkString:
    case ReplyType::kBigNumber:
    case ReplyType::kVerbatim:
      return AppendString(reply.str, encoding, out);
    case ReplyType::kArray:
    case ReplyType::kMap:
    case ReplyType::kSet:
    case ReplyType::kPush:
      out->push_back('[');
      for (std::size_t i = 0; i < reply.elements.size(); ++i) {
        if (i > 0) out->push_back(',');
        AppendJsonValue(reply.elements[i], encoding, false, out);
      }
      out->push_back(']');
      return;
  }
}

std::string JsonError(std::string_view message) {
  std::string out = "{\"error\":";
  AppendJsonString(message, &out);
  out.push_back('}');
  return out;
}

}  // namespace latch::rest
