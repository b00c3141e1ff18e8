// Multibulk requests. Every row runs whole, split in two at every offset and one byte at a
// time (see CheckCase). Expected texts and outcomes were checked by sending the same bytes
// to redis-server 7.0.15; rows whose behaviour looks surprising say so.
#include "latch/protocol/request_parser.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "protocol/request_parser_check.h"
#include "protocol/request_parser_harness.h"

namespace latch::protocol::testing {
namespace {

using namespace std::string_literals;

constexpr std::size_t kPendingLimit = kInlineMaxSize;

std::string Mb(const std::vector<std::string>& args) {
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (const std::string& a : args) out += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  return out;
}

const std::string kGet = Mb({"GET", "k"});  // 20 bytes
const std::string kPing = Mb({"PING"});     // 14 bytes

ParserLimits Unauth() { return {kDefaultMaxBulkLen, false}; }

std::vector<Case> WellFormedCases() {
  return {
      {"get", kGet, {Cmd({"GET", "k"}, 20)}},
      {"pipeline",
       kGet + kPing + Mb({"SET", "key", "value"}),
       {Cmd({"GET", "k"}, 20), Cmd({"PING"}, 14), Cmd({"SET", "key", "value"}, 33)}},
      {"partial next request", kPing + "*2\r\n$3\r\nGE", {Cmd({"PING"}, 14)}, 10, 3},
      {"partial count line", "*2", {}, 2},
      {"count line CR without LF yet", "*2\r", {}, 3},
      {"partial bulk wants rest", "*1\r\n$10\r\nabc", {}, 12, 9},
      {"bulk payload without CRLF yet", "*1\r\n$3\r\nabc", {}, 11, 2},
      {"empty argument", "*2\r\n$4\r\nECHO\r\n$0\r\n\r\n", {Cmd({"ECHO", ""}, 20)}},
      {"binary-safe argument",
       "*2\r\n$4\r\nECHO\r\n$7\r\na\0\r\nb\n\r\r\n"s,
       {Cmd({"ECHO", "a\0\r\nb\n\r"s}, 27)}},
      {"zero count is empty", "*0\r\n", {Empty(4)}},
      {"negative count is empty", "*-1\r\n" + kPing, {Empty(5), Cmd({"PING"}, 14)}},
      // Redis: "*-5\r\nPING\r\n" answers +PONG (the rest is a new inline request).
      {"negative count then inline", "*-5\r\nPING\r\n", {Empty(5), Cmd({"PING"}, 6)}},
      // Redis skips the byte after a header's '\r' and the two bytes after a payload
      // without looking at them: "*1\rX$4\r\nPINGxy" answers +PONG.
      {"terminators not checked",
       "*1\rX$4\r\nPINGxy" + kPing,
       {Cmd({"PING"}, 14), Cmd({"PING"}, 14)}},
      {"max int count waits", "*2147483647\r\n", {}, 13},
      {"max bulk len waits", "*1\r\n$536870912\r\n", {}, 16, 536870914},
      {"huge bulk len with raised limit",
       "*1\r\n$9223372036854775805\r\nab",
       {},
       28,
       9223372036854775805ULL,
       {INT64_MAX, true}},
      {"custom max bulk len at limit",
       "*1\r\n$10\r\n0123456789\r\n",
       {Cmd({"0123456789"}, 21)},
       0,
       0,
       {10, true}},
      {"count line in exactly 64 KiB pending waits",
       "*" + std::string(kPendingLimit - 1, '1'),
       {},
       kPendingLimit},
      {"bulk header in exactly 64 KiB pending waits",
       "*1\r\n" + std::string(kPendingLimit, 'x'),
       {},
       kPendingLimit + 4},
      // The line end was seen, only the byte after '\r' is missing: no size check.
      {"long count line with CR waits",
       "*" + std::string(kPendingLimit + 10, '1') + "\r",
       {},
       kPendingLimit + 12,
       0,
       {},
       /*split_invariant=*/false},
      {"large argument",
       Mb({"SET", "k", std::string(100000, 'v')}),
       {Cmd({"SET", "k", std::string(100000, 'v')}, 100031)}},
  };
}

std::vector<Case> ErrorCases() {
  const std::string bad_count = "ERR Protocol error: invalid multibulk length";
  const std::string bad_len = "ERR Protocol error: invalid bulk length";
  return {
      {"plus sign count", "*+1\r\n", {Err(bad_count)}, 5},
      {"leading zero count", "*01\r\n", {Err(bad_count)}, 5},
      {"empty count", "*\r\n", {Err(bad_count)}, 3},
      {"minus zero count", "*-0\r\n", {Err(bad_count)}, 5},
      {"space in count", "*1 \r\n", {Err(bad_count)}, 5},
      {"count over INT_MAX", "*2147483648\r\n", {Err(bad_count)}, 13},
      {"count overflows int64", "*99999999999999999999\r\n", {Err(bad_count)}, 23},
      {"error after good request", kPing + "*x\r\n", {Cmd({"PING"}, 14), Err(bad_count)}, 4},
      {"expected dollar", "*1\r\nx\r\n", {Err("ERR Protocol error: expected '$', got 'x'")}, 7},
      {"expected dollar waits for LF byte", "*1\r\nx\r", {}, 6},
      // Redis turns CR and LF in error texts into spaces.
      {"expected dollar got CR",
       "*1\r\n\r\n",
       {Err("ERR Protocol error: expected '$', got ' '")},
       6},
      {"expected dollar got LF",
       "*1\r\n\n$4\r\n",
       {Err("ERR Protocol error: expected '$', got ' '")},
       9},
      {"expected dollar got 0xff",
       "*1\r\n\xff"
       "4\r\n",
       {Err("ERR Protocol error: expected '$', got '\xff'")},
       8},
      {"second argument header",
       "*2\r\n$4\r\nECHO\r\n:1\r\n",
       {Err("ERR Protocol error: expected '$', got ':'")},
       18},
      {"negative bulk len", "*1\r\n$-1\r\n", {Err(bad_len)}, 9},
      {"leading zero bulk len", "*1\r\n$04\r\nPING\r\n", {Err(bad_len)}, 15},
      {"plus bulk len", "*1\r\n$+4\r\nPING\r\n", {Err(bad_len)}, 15},
      {"empty bulk len", "*1\r\n$\r\n", {Err(bad_len)}, 7},
      {"non-digit bulk len", "*1\r\n$\xff\r\n", {Err(bad_len)}, 8},
      {"bulk len over default max", "*1\r\n$536870913\r\n", {Err(bad_len)}, 16},
      {"bulk len overflows int64", "*1\r\n$9223372036854775808\r\n", {Err(bad_len)}, 26},
      {"bulk len over custom max", "*1\r\n$11\r\n", {Err(bad_len)}, 9, 0, {10, true}},
      {"too big count line",
       "*" + std::string(kPendingLimit, '1'),
       {Err("ERR Protocol error: too big mbulk count string")},
       kPendingLimit + 1},
      {"too big bulk header",
       "*1\r\n" + std::string(kPendingLimit + 1, 'x'),
       {Err("ERR Protocol error: too big bulk count string")},
       kPendingLimit + 5},
      {"too big second bulk header",
       "*2\r\n$4\r\nPING\r\n" + std::string(kPendingLimit + 1, '1'),
       {Err("ERR Protocol error: too big bulk count string")},
       kPendingLimit + 15},
  };
}

// Redis finds line ends with strchr(): a NUL before the '\r' hides it, so the request
// waits until more than 64 KiB are pending (checked against redis-server 7.0.15).
std::vector<Case> NulCases() {
  return {
      {"NUL in count line waits", "*1\0\r\n"s + kPing, {}, 19},
      {"NUL in count line then too big",
       "*1\0\r\n"s + std::string(kPendingLimit, 'x'),
       {Err("ERR Protocol error: too big mbulk count string")},
       kPendingLimit + 5},
      {"NUL in bulk header waits", "*1\r\n$4\0\r\nPING\r\n"s, {}, 15},
      {"NUL in bulk header then too big",
       "*1\r\n$4\0\r\n"s + std::string(kPendingLimit, 'x'),
       {Err("ERR Protocol error: too big bulk count string")},
       kPendingLimit + 9},
      {"NUL after the line end is data", "*1\r\n$1\r\n\0\r\n"s, {Cmd({"\0"s}, 11)}},
  };
}

// Before AUTH Redis refuses more than 10 arguments and bulks over 16384 bytes, with texts
// of their own (not "invalid ..."), checked against redis-server 7.0.15 with requirepass.
std::vector<Case> UnauthenticatedCases() {
  const std::string count = "ERR Protocol error: unauthenticated multibulk length";
  const std::string len = "ERR Protocol error: unauthenticated bulk length";
  return {
      {"eleven args", "*11\r\n", {Err(count)}, 5, 0, Unauth()},
      {"ten args wait", "*10\r\n", {}, 5, 0, Unauth()},
      {"bulk over 16384", "*1\r\n$16385\r\n", {Err(len)}, 12, 0, Unauth()},
      {"bulk of 16384 waits", "*1\r\n$16384\r\n", {}, 12, 16386, Unauth()},
      {"second bulk over 16384", "*2\r\n$4\r\nPING\r\n$16385\r\n", {Err(len)}, 22, 0, Unauth()},
      {"negative count still empty", "*-20\r\n", {Empty(6)}, 0, 0, Unauth()},
      {"invalid beats unauthenticated",
       "*2147483648\r\n",
       {Err("ERR Protocol error: invalid multibulk length")},
       13,
       0,
       Unauth()},
      {"authenticated has no such limit", "*11\r\n$16385\r\n", {}, 13, 16387},
  };
}

TEST(RequestParserMultibulk, WellFormed) {
  for (const Case& c : WellFormedCases()) CheckCase(c);
}
TEST(RequestParserMultibulk, Errors) {
  for (const Case& c : ErrorCases()) CheckCase(c);
}
TEST(RequestParserMultibulk, NulHidesLineEnd) {
  for (const Case& c : NulCases()) CheckCase(c);
}
TEST(RequestParserMultibulk, Unauthenticated) {
  for (const Case& c : UnauthenticatedCases()) CheckCase(c);
}

TEST(RequestParserMultibulk, ArgsPointIntoTheBufferGiven) {
  RequestParser parser;
  const std::string buf = kGet;
  ASSERT_EQ(parser.Parse(buf), RequestParser::Result::kCommand);
  ASSERT_EQ(parser.args().size(), 2u);
  EXPECT_EQ(parser.args()[0].data(), buf.data() + 8);
  EXPECT_EQ(parser.args()[1].data(), buf.data() + 17);
}

TEST(RequestParserMultibulk, BytesWantedShrinksAsTheBulkArrives) {
  RequestParser parser;
  std::string buf = "*1\r\n$100\r\n";
  EXPECT_EQ(parser.Parse(buf), RequestParser::Result::kNeedMore);
  EXPECT_EQ(parser.bytes_wanted(), 102u);
  buf += std::string(60, 'a');
  EXPECT_EQ(parser.Parse(buf), RequestParser::Result::kNeedMore);
  EXPECT_EQ(parser.bytes_wanted(), 42u);
  buf += std::string(40, 'a') + "\r\n";
  EXPECT_EQ(parser.Parse(buf), RequestParser::Result::kCommand);
  EXPECT_EQ(parser.bytes_wanted(), 0u);
  EXPECT_EQ(parser.Parse("*1\r\n"), RequestParser::Result::kNeedMore);
  EXPECT_EQ(parser.bytes_wanted(), 0u);  // header not read yet: unknown
}

TEST(RequestParserMultibulk, ErrorIsSticky) {
  RequestParser parser;
  ASSERT_EQ(parser.Parse("*x\r\n"), RequestParser::Result::kError);
  EXPECT_EQ(parser.Parse(kPing), RequestParser::Result::kError);
  EXPECT_EQ(parser.error(), "ERR Protocol error: invalid multibulk length");
}

TEST(RequestParserMultibulk, LimitsChangeBetweenRequests) {
  RequestParser parser(Unauth());
  ASSERT_EQ(parser.Parse(kPing), RequestParser::Result::kCommand);
  parser.set_limits({});
  const std::string wide = Mb(std::vector<std::string>(12, "a"));
  ASSERT_EQ(parser.Parse(wide), RequestParser::Result::kCommand);
  EXPECT_EQ(parser.args().size(), 12u);
}

}  // namespace
}  // namespace latch::protocol::testing
