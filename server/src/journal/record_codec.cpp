#include "journal/record_codec.h"

#include <charconv>
#include <cstring>
#include <initializer_list>

namespace latch::journal {
namespace {

// Writes a record straight into the buffer: one resize per record for at most `bound` bytes,
// then stores, instead of some 25 std::string appends (the iterator-range append of each
// number went through _M_replace). Measured with callgrind at c50 P16 under everysec: the
// SET record cost about 900 instructions of the request's 2,950 (off: 2,030).
class RecordCodecWriter {
 public:
  // Room for each bulk string: "$", up to 20 digits, CRLF, the bytes, CRLF.
  static constexpr std::size_t BulkBound(std::size_t len) { return len + 25; }
  static constexpr std::size_t kNumberBound = 25 + 20;  // a bulk string of a number

  RecordCodecWriter(std::string* out, std::size_t bound) : out_(out), start_(out->size()) {
    out->resize(start_ + bound);
    p_ = out->data() + start_;
  }
  ~RecordCodecWriter() { out_->resize(static_cast<std::size_t>(p_ - out_->data())); }
  RecordCodecWriter(const RecordCodecWriter&) = delete;
  RecordCodecWriter& operator=(const RecordCodecWriter&) = delete;

  void Raw(std::string_view s) {
    std::memcpy(p_, s.data(), s.size());
    p_ += s.size();
  }
  void Header(char prefix, std::uint64_t n) {
    *p_++ = prefix;
    p_ = std::to_chars(p_, p_ + 20, n).ptr;
    Crlf();
  }
  void Bulk(std::string_view s) {
    Header('$', s.size());
    Raw(s);
    Crlf();
  }
  void BulkNumber(std::uint64_t n) {
    char buf[20];
    char* end = std::to_chars(buf, buf + sizeof buf, n).ptr;
    Bulk(std::string_view(buf, static_cast<std::size_t>(end - buf)));
  }
  void Deadline(std::int64_t deadline_wall_ms) {
    Raw("$4\r\nPXAT\r\n");
    BulkNumber(static_cast<std::uint64_t>(deadline_wall_ms));
  }
  static constexpr std::size_t kDeadlineBound = 10 + kNumberBound;

 private:
  void Crlf() {
    p_[0] = '\r';
    p_[1] = '\n';
    p_ += 2;
  }
  std::string* out_;
  std::size_t start_;
  char* p_;
};

// Longest record header we accept ("*<n>" or "$<n>" digits), as Redis's loader.
constexpr std::size_t kMaxHeaderDigits = 20;

}  // namespace

void EncodeSet(std::string* out, std::string_view key, std::string_view value,
               std::int64_t deadline_wall_ms) {
  using W = RecordCodecWriter;
  W w(out, 4 + W::BulkBound(3) + W::BulkBound(key.size()) + W::BulkBound(value.size()) +
               W::kDeadlineBound);
  w.Raw(deadline_wall_ms > 0 ? std::string_view("*5\r\n$3\r\nSET\r\n")
                             : std::string_view("*3\r\n$3\r\nSET\r\n"));
  w.Bulk(key);
  w.Bulk(value);
  if (deadline_wall_ms > 0) w.Deadline(deadline_wall_ms);
}

void EncodeLock(std::string* out, std::string_view key, std::string_view owner, std::uint64_t token,
                std::int64_t deadline_wall_ms) {
  using W = RecordCodecWriter;
  W w(out, 4 + W::BulkBound(10) + W::BulkBound(key.size()) + W::BulkBound(owner.size()) +
               W::kNumberBound + W::kDeadlineBound);
  w.Raw(deadline_wall_ms > 0 ? std::string_view("*6\r\n$10\r\nLATCH.LOCK\r\n")
                             : std::string_view("*4\r\n$10\r\nLATCH.LOCK\r\n"));
  w.Bulk(key);
  w.Bulk(owner);
  w.BulkNumber(token);
  if (deadline_wall_ms > 0) w.Deadline(deadline_wall_ms);
}

void EncodeDel(std::string* out, std::string_view key) {
  RecordCodecWriter w(out, 13 + RecordCodecWriter::BulkBound(key.size()));
  w.Raw("*2\r\n$3\r\nDEL\r\n");
  w.Bulk(key);
}

void EncodeFence(std::string* out, std::uint64_t token) {
  RecordCodecWriter w(out, 22 + RecordCodecWriter::kNumberBound);
  w.Raw("*2\r\n$11\r\nLATCH.FENCE\r\n");
  w.BulkNumber(token);
}

void EncodeSelect(std::string* out, int db) {
  RecordCodecWriter w(out, 16 + RecordCodecWriter::kNumberBound);
  w.Raw("*2\r\n$6\r\nSELECT\r\n");
  w.BulkNumber(static_cast<std::uint64_t>(db));
}

void EncodeSwapDb(std::string* out, int a, int b) {
  RecordCodecWriter w(out, 16 + 2 * RecordCodecWriter::kNumberBound);
  w.Raw("*3\r\n$6\r\nSWAPDB\r\n");
  w.BulkNumber(static_cast<std::uint64_t>(a));
  w.BulkNumber(static_cast<std::uint64_t>(b));
}

void EncodeFlushShard(std::string* out, int index, int count) {
  RecordCodecWriter w(out, 27 + 2 * RecordCodecWriter::kNumberBound);
  w.Raw("*3\r\n$16\r\nLATCH.FLUSHSHARD\r\n");
  w.BulkNumber(static_cast<std::uint64_t>(index));
  w.BulkNumber(static_cast<std::uint64_t>(count));
}

void EncodeTimestamp(std::string* out, std::int64_t unix_s) {
  out->append("#TS:");
  out->append(std::to_string(unix_s));
  out->append("\r\n");
}

RecordReader::Result RecordReader::ReadHeader(char c, std::int64_t* n) {
  if (pos_ >= data_.size()) return Result::kTruncated;
  if (data_[pos_] != c) return Result::kBadFormat;
  const std::size_t eol = data_.find("\r\n", pos_);
  if (eol == std::string_view::npos) {
    return data_.size() - pos_ > kMaxHeaderDigits + 1 ? Result::kBadFormat : Result::kTruncated;
  }
  const char* first = data_.data() + pos_ + 1;
  const char* last = data_.data() + eol;
  auto [end, ec] = std::from_chars(first, last, *n);
  if (ec != std::errc() || end != last || first == last || *n < 0) return Result::kBadFormat;
  pos_ = eol + 2;
  return Result::kRecord;
}

RecordReader::Result RecordReader::Next(std::vector<std::string_view>* args) {
  args->clear();
  // Annotations ("#TS:...\r\n") are lines of their own between records.
  while (pos_ < data_.size() && data_[pos_] == '#') {
    const std::size_t eol = data_.find("\r\n", pos_);
    if (eol == std::string_view::npos) return Result::kTruncated;
    pos_ = eol + 2;
    valid_ = pos_;
  }
  if (pos_ >= data_.size()) return Result::kEnd;
  std::int64_t count = 0;
  if (Result r = ReadHeader('*', &count); r != Result::kRecord) return r;
  if (count < 1) return Result::kBadFormat;
  for (std::int64_t i = 0; i < count; ++i) {
    std::int64_t len = 0;
    if (Result r = ReadHeader('$', &len); r != Result::kRecord) return r;
    const auto n = static_cast<std::size_t>(len);
    if (data_.size() - pos_ < n + 2) return Result::kTruncated;
    if (data_.compare(pos_ + n, 2, "\r\n") != 0) return Result::kBadFormat;
    args->emplace_back(data_.data() + pos_, n);
    pos_ += n + 2;
  }
  valid_ = pos_;
  return Result::kRecord;
}

}  // namespace latch::journal
