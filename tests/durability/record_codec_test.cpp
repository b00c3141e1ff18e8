// The journal's record format: what the writer encodes reads back, a tail cut at any byte is
// "truncated" (never a wrong record), and damage in the middle is "bad format".
#include "journal/record_codec.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace latch::journal {
namespace {

using Result = RecordReader::Result;

std::string SampleJournal() {
  std::string s;
  EncodeTimestamp(&s, 1700000000);
  EncodeSet(&s, "k", "v", 0);
  EncodeSet(&s, "lease", std::string("a\r\nb\0c", 6), 1700000000123);
  EncodeLock(&s, "lock", "owner", 1700000000000000001ULL, 1700000000456);
  EncodeDel(&s, "k");
  EncodeFence(&s, 42);
  EncodeFlushShard(&s, 3, 16);
  return s;
}

std::vector<std::vector<std::string>> ReadAll(std::string_view data, Result* end) {
  RecordReader r(data);
  std::vector<std::vector<std::string>> out;
  std::vector<std::string_view> args;
  Result res;
  while ((res = r.Next(&args)) == Result::kRecord) out.emplace_back(args.begin(), args.end());
  *end = res;
  return out;
}

TEST(RecordCodecTest, RecordsReadBackAsWritten) {
  Result end;
  const auto records = ReadAll(SampleJournal(), &end);
  EXPECT_EQ(end, Result::kEnd);
  ASSERT_EQ(records.size(), 6u);
  EXPECT_EQ(records[0], (std::vector<std::string>{"SET", "k", "v"}));
  EXPECT_EQ(records[1], (std::vector<std::string>{"SET", "lease", std::string("a\r\nb\0c", 6),
                                                  "PXAT", "1700000000123"}));
  EXPECT_EQ(records[2], (std::vector<std::string>{"LATCH.LOCK", "lock", "owner",
                                                  "1700000000000000001", "PXAT", "1700000000456"}));
  EXPECT_EQ(records[3], (std::vector<std::string>{"DEL", "k"}));
  EXPECT_EQ(records[4], (std::vector<std::string>{"LATCH.FENCE", "42"}));
  EXPECT_EQ(records[5], (std::vector<std::string>{"LATCH.FLUSHSHARD", "3", "16"}));
}

// A crash can stop the file at any byte: every cut reads the whole records before it, then
// says "truncated" with the offset just past the last whole record or annotation, or ends
// cleanly when the cut falls on such a boundary.
TEST(RecordCodecTest, EveryCutIsTruncatedAtTheLastWholeRecord) {
  const std::string full = SampleJournal();
  const std::size_t annotation = full.find("\r\n") + 2;  // "#TS:...\r\n"
  std::vector<std::size_t> record_ends;
  {
    RecordReader r(full);
    std::vector<std::string_view> args;
    while (r.Next(&args) == Result::kRecord) record_ends.push_back(r.valid_up_to());
  }
  ASSERT_EQ(record_ends.size(), 6u);
  for (std::size_t cut = 0; cut < full.size(); ++cut) {
    RecordReader r(std::string_view(full).substr(0, cut));
    std::vector<std::string_view> args;
    Result res;
    std::size_t whole = 0;
    while ((res = r.Next(&args)) == Result::kRecord) ++whole;
    std::size_t expect_whole = 0;
    std::size_t valid = cut >= annotation ? annotation : 0;
    for (std::size_t end : record_ends) {
      if (end <= cut) {
        ++expect_whole;
        valid = end;
      }
    }
    EXPECT_EQ(whole, expect_whole) << cut;
    EXPECT_EQ(r.valid_up_to(), valid) << cut;
    EXPECT_EQ(res, valid == cut ? Result::kEnd : Result::kTruncated) << cut;
  }
}

TEST(RecordCodecTest, DamageInTheMiddleIsBadFormat) {
  Result end;
  ReadAll("*2\r\n$3\r\nDEL\r\n$1\r\nk\r\nGARBAGE\r\n", &end);
  EXPECT_EQ(end, Result::kBadFormat);
  ReadAll("*2\r\n$3\r\nDEL\r\n$1\r\nkXY*1\r\n", &end);  // a bulk without its CRLF
  EXPECT_EQ(end, Result::kBadFormat);
  ReadAll("*x\r\n", &end);
  EXPECT_EQ(end, Result::kBadFormat);
}

}  // namespace
}  // namespace latch::journal
