#include "latch/protocol/reply_writer.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace latch::protocol {

void ReplyWriter::Header(char type, std::int64_t n) {
  char buf[24];
  buf[0] = type;
  auto [end, ec] = std::to_chars(buf + 1, buf + sizeof(buf) - 2, n);
  (void)ec;
  *end++ = '\r';
  *end++ = '\n';
  out_->append(buf, end);
}

void ReplyWriter::Simple(std::string_view s) {
  out_->push_back('+');
  out_->append(s);
  out_->append("\r\n");
}

void ReplyWriter::ErrorAlreadyCounted(std::string_view s) {
  // A newline inside an error would split the reply: Redis replaces them with spaces.
  out_->push_back('-');
  std::size_t start = out_->size();
  out_->append(s);
  for (std::size_t i = start; i < out_->size(); ++i) {
    char& c = (*out_)[i];
    if (c == '\r' || c == '\n') c = ' ';
  }
  out_->append("\r\n");
}

void ReplyWriter::Integer(std::int64_t v) { Header(':', v); }

void ReplyWriter::Bulk(std::string_view s) {
  Header('$', static_cast<std::int64_t>(s.size()));
  out_->append(s);
  out_->append("\r\n");
}

void ReplyWriter::Null() { Raw(proto_ >= 3 ? "_\r\n" : "$-1\r\n"); }
void ReplyWriter::NullArray() { Raw(proto_ >= 3 ? "_\r\n" : "*-1\r\n"); }
void ReplyWriter::ArrayHeader(std::size_t n) { Header('*', static_cast<std::int64_t>(n)); }

void ReplyWriter::MapHeader(std::size_t pairs) {
  if (proto_ >= 3) {
    Header('%', static_cast<std::int64_t>(pairs));
  } else {
    Header('*', static_cast<std::int64_t>(pairs * 2));
  }
}

void ReplyWriter::SetHeader(std::size_t n) {
  Header(proto_ >= 3 ? '~' : '*', static_cast<std::int64_t>(n));
}

void ReplyWriter::Double(double v) {
  char buf[64];
  int len;
  if (std::isinf(v)) {
    len = std::snprintf(buf, sizeof(buf), "%s", v > 0 ? "inf" : "-inf");
  } else if (std::isnan(v)) {
    len = std::snprintf(buf, sizeof(buf), "nan");
  } else {
    len = std::snprintf(buf, sizeof(buf), "%.17g", v);
  }
  std::string_view text(buf, static_cast<std::size_t>(len));
  if (proto_ >= 3) {
    out_->push_back(',');
    out_->append(text);
    out_->append("\r\n");
  } else {
    Bulk(text);
  }
}

void ReplyWriter::Bool(bool v) {
  if (proto_ >= 3) {
    Raw(v ? "#t\r\n" : "#f\r\n");
  } else {
    Raw(v ? ":1\r\n" : ":0\r\n");
  }
}

void ReplyWriter::Verbatim(std::string_view s) {
  if (proto_ >= 3) {
    Header('=', static_cast<std::int64_t>(s.size() + 4));
    out_->append("txt:");
    out_->append(s);
    out_->append("\r\n");
  } else {
    Bulk(s);
  }
}

}  // namespace latch::protocol
