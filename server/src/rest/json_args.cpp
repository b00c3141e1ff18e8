#include "rest/json_args.h"

#include <cstring>

#include "rest/rest_text.h"

namespace latch::rest {
namespace {

constexpr char kEmptyCommand[] = "ERR empty command";
constexpr char kNotACommand[] =
    "ERR the request body must be a JSON array of strings and numbers, e.g. "
    "[\"SET\",\"key\",\"value\"]";
constexpr char kNotACommandList[] =
    "ERR the request body must be a JSON array of commands, e.g. "
    "[[\"SET\",\"key\",\"value\"],[\"GET\",\"key\"]]";

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

void AppendUtf8(std::uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// One pass over the body; the first error found is kept and every later step fails fast.
class Reader {
 public:
  Reader(std::string_view text, std::int64_t max_bulk_len)
      : text_(text), max_bulk_len_(max_bulk_len) {}

  // One command: '[' arg (',' arg)* ']'. `shape` is the error for a wrong type.
  bool Command(Args* out, const char* shape) {
    SkipSpace();
    if (!Expect('[', shape)) return false;
    SkipSpace();
    if (Peek() == ']') {
      ++pos_;
      return Fail(kEmptyCommand);
    }
    for (;;) {
      out->emplace_back();
      if (!Argument(&out->back(), shape)) return false;
      SkipSpace();
      if (Peek() == ']') {
        ++pos_;
        return true;
      }
      if (!Expect(',', "expected ',' or ']'")) return false;
    }
  }

  bool CommandList(std::vector<Args>* out) {
    SkipSpace();
    if (!Expect('[', kNotACommandList)) return false;
    SkipSpace();
    if (Peek() == ']') {
      ++pos_;
      return Fail(kEmptyCommand);
    }
    for (;;) {
      out->emplace_back();
      SkipSpace();
      if (Peek() != '[') return Fail(kNotACommandList);
      if (!Command(&out->back(), kNotACommandList)) return false;
      SkipSpace();
      if (Peek() == ']') {
        ++pos_;
        return true;
      }
      if (!Expect(',', "expected ',' or ']'")) return false;
    }
  }

  bool End() {
    SkipSpace();
    return pos_ == text_.size() || Syntax("unexpected data after the JSON value");
  }

  std::string TakeError() { return std::move(error_); }

 private:
  char Peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  bool AtEnd() const { return pos_ >= text_.size(); }

  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }

  bool Fail(std::string message) {
    if (error_.empty()) error_ = std::move(message);
    return false;
  }
  bool Syntax(const char* what) {
    return Fail("ERR invalid JSON in the request body at byte " + std::to_string(pos_) + ": " +
                what);
  }

  // `what`: an ERR text (a wrong shape) or a syntax description.
  bool Expect(char c, const char* what) {
    if (Peek() == c) {
      ++pos_;
      return true;
    }
    if (std::strncmp(what, "ERR ", 4) == 0 && !AtEnd()) return Fail(what);
    return Syntax(AtEnd() ? "unexpected end of the body" : what);
  }

  bool Argument(std::string* out, const char* shape) {
    SkipSpace();
    const char c = Peek();
    bool ok;
    if (c == '"') {
      ok = String(out);
    } else if (c == '-' || IsDigit(c)) {
      ok = Number(out);
    } else if (Literal("true")) {
      *out = "true";
      ok = true;
    } else if (Literal("false")) {
      *out = "false";
      ok = true;
    } else if (AtEnd()) {
      ok = Syntax("unexpected end of the body");
    } else if (c == '[' || c == '{' || Literal("null")) {
      ok = Fail(shape);
    } else {
      ok = Syntax("expected a string, a number or a boolean");
    }
    if (ok && static_cast<std::int64_t>(out->size()) > max_bulk_len_)
      return Fail(kBulkTooLongError);
    return ok;
  }

  bool Literal(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  // The JSON number grammar; the argument is the number's text as written.
  bool Number(std::string* out) {
    const std::size_t start = pos_;
    if (Peek() == '-') ++pos_;
    if (Peek() == '0') {
      ++pos_;
    } else if (IsDigit(Peek())) {
      while (IsDigit(Peek())) ++pos_;
    } else {
      return Syntax("invalid number");
    }
    if (Peek() == '.') {
      ++pos_;
      if (!IsDigit(Peek())) return Syntax("invalid number");
      while (IsDigit(Peek())) ++pos_;
    }
    if (Peek() == 'e' || Peek() == 'E') {
      ++pos_;
      if (Peek() == '+' || Peek() == '-') ++pos_;
      if (!IsDigit(Peek())) return Syntax("invalid number");
      while (IsDigit(Peek())) ++pos_;
    }
    out->assign(text_.substr(start, pos_ - start));
    return true;
  }

  bool String(std::string* out) {
    ++pos_;  // the opening quote
    for (;;) {
      // Copy the run of plain bytes up to the next quote, backslash or control byte at once.
      std::size_t run = pos_;
      while (run < text_.size() && text_[run] != '"' && text_[run] != '\\' &&
             static_cast<unsigned char>(text_[run]) >= 0x20) {
        ++run;
      }
      out->append(text_.substr(pos_, run - pos_));
      pos_ = run;
      if (static_cast<std::int64_t>(out->size()) > max_bulk_len_) return Fail(kBulkTooLongError);
      if (AtEnd()) return Syntax("unterminated string");
      const char c = text_[pos_++];
      if (c == '"') return true;
      if (c != '\\') {
        --pos_;
        return Syntax("control character in a string");
      }
      if (!Escape(out)) return false;
    }
  }

  bool Escape(std::string* out) {
    if (AtEnd()) return Syntax("unterminated string");
    const char c = text_[pos_++];
    switch (c) {
      case '"':
        out->push_back('"');
        return true;
      case '\\':
        out->push_back('\\');
        return true;
      case '/':
        out->push_back('/');
        return true;
      case 'b':
        out->push_back('\b');
        return true;
      case 'f':
        out->push_back('\f');
        return true;
      case 'n':
        out->push_back('\n');
        return true;
      case 'r':
        out->push_back('\r');
        return true;
      case 't':
        out->push_back('\t');
        return true;
      case 'u':
        return Unicode(out);
      default:
        --pos_;
        return Syntax("invalid escape in a string");
    }
  }

  // After "\u": four hex digits; a surrogate pair makes one code point, a lone surrogate
  // becomes U+FFFD (what JSON.stringify's well-formed output and Go's decoder agree on).
  bool Unicode(std::string* out) {
    int cp = Hex4();
    if (cp < 0) return Syntax("invalid \\u escape");
    if (cp >= 0xD800 && cp <= 0xDBFF && text_.substr(pos_, 2) == "\\u") {
      const std::size_t save = pos_;
      pos_ += 2;
      const int low = Hex4();
      if (low >= 0xDC00 && low <= 0xDFFF) {
        AppendUtf8(0x10000 + ((static_cast<std::uint32_t>(cp) - 0xD800) << 10) +
                       (static_cast<std::uint32_t>(low) - 0xDC00),
                   out);
        return true;
      }
      pos_ = save;  // not a pair: the next escape is read on its own
    }
    AppendUtf8(cp >= 0xD800 && cp <= 0xDFFF ? 0xFFFD : static_cast<std::uint32_t>(cp), out);
    return true;
  }

  int Hex4() {
    if (text_.size() - pos_ < 4) return -1;
    int v = 0;
    for (int i = 0; i < 4; ++i) {
      const int h = HexDigitValue(text_[pos_ + static_cast<std::size_t>(i)]);
      if (h < 0) return -1;
      v = v * 16 + h;
    }
    pos_ += 4;
    return v;
  }

  std::string_view text_;
  std::int64_t max_bulk_len_;
  std::size_t pos_ = 0;
  std::string error_;
};

}  // namespace

ArgsError ParseJsonCommand(std::string_view body, std::int64_t max_bulk_len, Args* out) {
  out->clear();
  Reader reader(body, max_bulk_len);
  if (reader.Command(out, kNotACommand) && reader.End()) return std::nullopt;
  return reader.TakeError();
}

ArgsError ParseJsonCommandList(std::string_view body, std::int64_t max_bulk_len,
                               std::vector<Args>* out) {
  out->clear();
  Reader reader(body, max_bulk_len);
  if (reader.CommandList(out) && reader.End()) return std::nullopt;
  return reader.TakeError();
}

}  // namespace latch::rest
