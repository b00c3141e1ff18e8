#include "journal/record_codec.h"

#include <charconv>
#include <initializer_list>

namespace latch::journal {
namespace {

void AppendNumber(std::string* out, char prefix, std::uint64_t n) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, n);
  out->push_back(prefix);
  out->append(buf, end);
  out->append("\r\n");
}

void AppendBulk(std::string* out, std::string_view s) {
  AppendNumber(out, '$', s.size());
  out->append(s);
  out->append("\r\n");
}

void AppendBulkNumber(std::string* out, std::uint64_t n) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, n);
  AppendBulk(out, std::string_view(buf, static_cast<std::size_t>(end - buf)));
}

void AppendDeadline(std::string* out, std::int64_t deadline_wall_ms) {
  AppendBulk(out, "PXAT");
  AppendBulkNumber(out, static_cast<std::uint64_t>(deadline_wall_ms));
}

// Longest record header we accept ("*<n>" or "$<n>" digits), as Redis's loader.
constexpr std::size_t kMaxHeaderDigits = 20;

}  // namespace

void EncodeSet(std::string* out, std::string_view key, std::string_view value,
               std::int64_t deadline_wall_ms) {
  AppendNumber(out, '*', deadline_wall_ms > 0 ? 5 : 3);
  AppendBulk(out, "SET");
  AppendBulk(out, key);
  AppendBulk(out, value);
  if (deadline_wall_ms > 0) AppendDeadline(out, deadline_wall_ms);
}

void EncodeLock(std::string* out, std::string_view key, std::string_view owner, std::uint64_t token,
                std::int64_t deadline_wall_ms) {
  AppendNumber(out, '*', deadline_wall_ms > 0 ? 6 : 4);
  AppendBulk(out, "LATCH.LOCK");
  AppendBulk(out, key);
  AppendBulk(out, owner);
  AppendBulkNumber(out, token);
  if (deadline_wall_ms > 0) AppendDeadline(out, deadline_wall_ms);
}

void EncodeDel(std::string* out, std::string_view key) {
  out->append("*2\r\n$3\r\nDEL\r\n");
  AppendBulk(out, key);
}

void EncodeFence(std::string* out, std::uint64_t token) {
  out->append("*2\r\n$11\r\nLATCH.FENCE\r\n");
  AppendBulkNumber(out, token);
}

void EncodeSelect(std::string* out, int db) {
  out->append("*2\r\n$6\r\nSELECT\r\n");
  AppendBulkNumber(out, static_cast<std::uint64_t>(db));
}

void EncodeSwapDb(std::string* out, int a, int b) {
  out->append("*3\r\n$6\r\nSWAPDB\r\n");
  AppendBulkNumber(out, static_cast<std::uint64_t>(a));
  AppendBulkNumber(out, static_cast<std::uint64_t>(b));
}

void EncodeFlushShard(std::string* out, int index, int count) {
  out->append("*3\r\n$16\r\nLATCH.FLUSHSHARD\r\n");
  AppendBulkNumber(out, static_cast<std::uint64_t>(index));
  AppendBulkNumber(out, static_cast<std::uint64_t>(count));
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
