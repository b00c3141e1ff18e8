// Table tests of the client-side reply reader. Every input is read whole, split in two at
// every byte position, and fed one byte at a time: the replies must not depend on how the
// bytes arrive.
#include "latch/protocol/reply_reader.h"
#include "latch/protocol/request_encoder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace latch::protocol {
namespace {

using R = Reply;

Reply Agg(ReplyType t, std::vector<Reply> e) { return Reply::Aggregate(t, std::move(e)); }
Reply Arr(std::vector<Reply> e) { return Agg(ReplyType::kArray, std::move(e)); }

Reply Typed(ReplyType t, std::string s) {
  Reply r;
  r.type = t;
  r.str = std::move(s);
  return r;
}

Reply Dbl(std::string text, double v) {
  Reply r = Typed(ReplyType::kDouble, std::move(text));
  r.number = v;
  return r;
}

Reply Bool(bool b) {
  Reply r;
  r.type = ReplyType::kBoolean;
  r.boolean = b;
  return r;
}

Reply Verbatim(std::string fmt, std::string text) {
  Reply r = Typed(ReplyType::kVerbatim, std::move(text));
  std::copy_n(fmt.begin(), 3, r.verbatim_format.begin());
  return r;
}

struct Outcome {
  std::vector<Reply> replies;
  std::string error;  // empty = no error
  std::size_t buffered = 0;
};

// Feeds the chunks, draining replies after each one (bounded: each Next() either returns a
// reply that consumed bytes or stops).
Outcome Read(const std::vector<std::string_view>& chunks, ReplyReaderLimits limits = {}) {
  ReplyReader reader(limits);
  Outcome out;
  for (auto chunk : chunks) {
    reader.Feed(chunk);
    for (int i = 0; i < 10000; ++i) {
      Reply r;
      auto st = reader.Next(&r);
      if (st == ReplyReader::Status::kReply) {
        out.replies.push_back(std::move(r));
        continue;
      }
      if (st == ReplyReader::Status::kError) out.error = reader.error();
      break;
    }
  }
  out.buffered = reader.buffered();
  return out;
}

// Every split of the input must give the same outcome as reading it whole.
void ExpectAllSplits(std::string_view input, const Outcome& expected,
                     ReplyReaderLimits limits = {}) {
  for (std::size_t cut = 0; cut <= input.size(); ++cut) {
    Outcome got = Read({input.substr(0, cut), input.substr(cut)}, limits);
    ASSERT_EQ(got.error.empty(), expected.error.empty()) << "cut at " << cut << ": " << got.error;
    if (expected.error.empty()) {
      ASSERT_EQ(got.replies, expected.replies) << "cut at " << cut;
      ASSERT_EQ(got.buffered, expected.buffered) << "cut at " << cut;
    }
  }
  std::vector<std::string_view> bytes;
  for (std::size_t i = 0; i < input.size(); ++i) bytes.push_back(input.substr(i, 1));
  Outcome got = Read(bytes, limits);
  ASSERT_EQ(got.error.empty(), expected.error.empty()) << got.error;
  if (expected.error.empty()) {
    ASSERT_EQ(got.replies, expected.replies);
  }
}

struct Case {
  std::string name;
  std::string input;
  std::vector<Reply> replies;
};

std::vector<Case> ValidCases() {
  Reply with_attr = R::Integer(7);
  Reply map = Agg(ReplyType::kMap, {R::Simple("a"), R::Integer(1), R::Bulk("b"), R::Nil()});
  return {
      {"simple", "+OK\r\n", {R::Simple("OK")}},
      {"empty simple", "+\r\n", {R::Simple("")}},
      {"error", "-ERR unknown command 'x'\r\n", {R::Error("ERR unknown command 'x'")}},
      {"integer", ":-42\r\n", {R::Integer(-42)}},
      {"int64 max", ":9223372036854775807\r\n", {R::Integer(INT64_MAX)}},
      {"bulk", "$5\r\nhello\r\n", {R::Bulk("hello")}},
      {"bulk with crlf inside", "$4\r\na\r\nb\r\n", {R::Bulk("a\r\nb")}},
      {"empty bulk", "$0\r\n\r\n", {R::Bulk("")}},
      {"null bulk", "$-1\r\n", {R::Nil()}},
      {"null array", "*-1\r\n", {R::Nil()}},
      {"resp3 null", "_\r\n", {R::Nil()}},
      {"empty array", "*0\r\n", {Arr({})}},
      {"array",
       "*3\r\n:1\r\n$1\r\nx\r\n+y\r\n",
       {Arr({R::Integer(1), R::Bulk("x"), R::Simple("y")})}},
      {"nested", "*2\r\n*1\r\n*0\r\n:5\r\n", {Arr({Arr({Arr({})}), R::Integer(5)})}},
      {"map", "%2\r\n+a\r\n:1\r\n$1\r\nb\r\n_\r\n", {map}},
      {"empty map", "%0\r\n", {Agg(ReplyType::kMap, {})}},
      {"set", "~2\r\n+a\r\n+b\r\n", {Agg(ReplyType::kSet, {R::Simple("a"), R::Simple("b")})}},
      {"push",
       ">2\r\n+message\r\n$2\r\nhi\r\n",
       {Agg(ReplyType::kPush, {R::Simple("message"), R::Bulk("hi")})}},
      {"double", ",3.25\r\n", {Dbl("3.25", 3.25)}},
      {"double exp", ",1e-3\r\n", {Dbl("1e-3", 0.001)}},
      {"double inf", ",inf\r\n", {Dbl("inf", HUGE_VAL)}},
      {"double -inf", ",-inf\r\n", {Dbl("-inf", -HUGE_VAL)}},
      {"true", "#t\r\n", {Bool(true)}},
      {"false", "#f\r\n", {Bool(false)}},
      {"big number",
       "(-3492890328409238509324850943850943825024385\r\n",
       {Typed(ReplyType::kBigNumber, "-3492890328409238509324850943850943825024385")}},
      {"verbatim", "=15\r\ntxt:Some string\r\n", {Verbatim("txt", "Some string")}},
      {"blob error", "!21\r\nSYNTAX invalid syntax\r\n", {R::Error("SYNTAX invalid syntax")}},
      {"attribute skipped", "|1\r\n+ttl\r\n:3\r\n:7\r\n", {with_attr}},
      {"attribute inside array",
       "*2\r\n|1\r\n+k\r\n+v\r\n:1\r\n:2\r\n",
       {Arr({R::Integer(1), R::Integer(2)})}},
      {"empty attribute", "|0\r\n:7\r\n", {with_attr}},
      {"pipelined",
       "+OK\r\n:1\r\n$-1\r\n*1\r\n+x\r\n",
       {R::Simple("OK"), R::Integer(1), R::Nil(), Arr({R::Simple("x")})}},
  };
}

TEST(ReplyReaderTest, ValidRepliesAtEverySplit) {
  for (const auto& c : ValidCases()) {
    SCOPED_TRACE(c.name);
    ExpectAllSplits(c.input, Outcome{c.replies, "", 0});
  }
}

TEST(ReplyReaderTest, AllCasesConcatenatedAtEverySplit) {
  std::string all;
  std::vector<Reply> replies;
  for (const auto& c : ValidCases()) {
    all += c.input;
    replies.insert(replies.end(), c.replies.begin(), c.replies.end());
  }
  ExpectAllSplits(all, Outcome{replies, "", 0});
}

TEST(ReplyReaderTest, IncompleteInputWaitsAndKeepsBytes) {
  for (std::string_view in :
       {"+OK", "+OK\r", "$5\r\nhel", "*2\r\n:1\r\n", "%1\r\n+a\r\n", "$3\r\nabc\r"}) {
    SCOPED_TRACE(std::string(in));
    Outcome o = Read({in});
    EXPECT_TRUE(o.replies.empty());
    EXPECT_EQ(o.error, "");
  }
}

TEST(ReplyReaderTest, AttributesAreKeptWhenAsked) {
  ReplyReaderLimits limits;
  limits.keep_attributes = true;
  Reply expected = R::Integer(7);
  expected.attributes = {R::Simple("ttl"), R::Integer(3)};
  ExpectAllSplits("|1\r\n+ttl\r\n:3\r\n:7\r\n", Outcome{{expected}, "", 0}, limits);

  Reply arr = Arr({R::Integer(1)});
  arr.attributes = {R::Simple("a"), R::Simple("b")};
  ExpectAllSplits("|1\r\n+a\r\n+b\r\n*1\r\n:1\r\n", Outcome{{arr}, "", 0}, limits);
}

struct BadCase {
  std::string input;
  std::string error;
};

TEST(ReplyReaderTest, MalformedInputIsAStickyError) {
  std::vector<BadCase> cases = {
      {"?x\r\n", "Protocol error: invalid reply type byte '?'"},
      {"\x01\r\n", "Protocol error: invalid reply type byte '\\x01'"},
      {":12a\r\n", "Protocol error: invalid integer '12a'"},
      {":\r\n", "Protocol error: invalid integer ''"},
      {":99999999999999999999\r\n", "Protocol error: invalid integer '99999999999999999999'"},
      {"$x\r\n", "Protocol error: invalid bulk length"},
      {"$-2\r\n", "Protocol error: invalid bulk length"},
      {"$3\r\nabcde\r\n", "Protocol error: bulk string not terminated by CRLF"},
      {"*-2\r\n", "Protocol error: invalid aggregate length"},
      {"%-1\r\n", "Protocol error: invalid aggregate length"},
      {"*?\r\n", "Protocol error: invalid aggregate length"},
      {"_x\r\n", "Protocol error: invalid null"},
      {",abc\r\n", "Protocol error: invalid double 'abc'"},
      {"#x\r\n", "Protocol error: invalid boolean"},
      {"(12a\r\n", "Protocol error: invalid big number"},
      {"=3\r\nabc\r\n", "Protocol error: verbatim string without a format prefix"},
      {"*1\r\n$2\r\nab\r\n!\r\n", ""},  // the reply before the garbage is still delivered
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.input);
    Outcome o = Read({c.input});
    if (c.error.empty()) {
      EXPECT_EQ(o.replies.size(), 1u);
      EXPECT_EQ(o.error, "Protocol error: invalid bulk length");
      continue;
    }
    EXPECT_EQ(o.error, c.error);
    ExpectAllSplits(c.input, Outcome{{}, c.error, 0});
  }
}

TEST(ReplyReaderTest, ErrorStaysAfterMoreInput) {
  ReplyReader reader;
  reader.Feed("?\r\n");
  Reply r;
  EXPECT_EQ(reader.Next(&r), ReplyReader::Status::kError);
  reader.Feed("+OK\r\n");
  EXPECT_EQ(reader.Next(&r), ReplyReader::Status::kError);
  EXPECT_EQ(reader.error(), "Protocol error: invalid reply type byte '?'");
  EXPECT_EQ(reader.buffered(), 0u);
}

TEST(ReplyReaderTest, DepthLimit) {
  ReplyReaderLimits limits;
  limits.max_depth = 3;
  ExpectAllSplits("*1\r\n*1\r\n*1\r\n:1\r\n", Outcome{{Arr({Arr({Arr({R::Integer(1)})})})}, "", 0},
                  limits);
  ExpectAllSplits("*1\r\n*1\r\n*1\r\n*1\r\n:1\r\n",
                  Outcome{{}, "Protocol error: nesting deeper than 3", 0}, limits);
  // Deep input does not recurse: a million levels fail fast at the default limit.
  std::string deep;
  for (int i = 0; i < 1000000; ++i) deep += "*1\r\n";
  EXPECT_EQ(Read({deep}).error, "Protocol error: nesting deeper than 32");
}

TEST(ReplyReaderTest, SizeLimits) {
  ReplyReaderLimits limits;
  limits.max_bulk_len = 4;
  limits.max_elements = 4;
  limits.max_line = 8;
  ExpectAllSplits("$4\r\nabcd\r\n", Outcome{{R::Bulk("abcd")}, "", 0}, limits);
  EXPECT_EQ(Read({"$5\r\n"}, limits).error, "Protocol error: bulk length over the limit");
  EXPECT_EQ(Read({"*5\r\n"}, limits).error, "Protocol error: aggregate length over the limit");
  EXPECT_EQ(Read({"%3\r\n"}, limits).error, "Protocol error: aggregate length over the limit");
  EXPECT_EQ(Read({"+123456789\r\n"}, limits).error, "Protocol error: reply line too long");
  // A line over the limit is refused before its CRLF arrives.
  EXPECT_EQ(Read({"+123456789"}, limits).error, "Protocol error: reply line too long");
  // A huge claimed length allocates nothing up front.
  EXPECT_EQ(Read({"*4000000000\r\n:1\r\n"}).error, "");
}

TEST(ReplyReaderTest, LargeBulkArrivingInPiecesIsCopiedOnce) {
  std::string body(1 << 20, 'x');
  std::string input = "$" + std::to_string(body.size()) + "\r\n" + body + "\r\n+OK\r\n";
  std::vector<std::string_view> chunks;
  for (std::size_t i = 0; i < input.size(); i += 1000) {
    chunks.push_back(std::string_view(input).substr(i, 1000));
  }
  Outcome o = Read(chunks);
  ASSERT_EQ(o.replies.size(), 2u);
  EXPECT_EQ(o.replies[0].str, body);
  EXPECT_EQ(o.replies[1], R::Simple("OK"));
}

TEST(ReplyReaderTest, FindAndToString) {
  Reply map = Agg(ReplyType::kMap, {R::Bulk("proto"), R::Integer(3), R::Bulk("id"), R::Integer(9)});
  ASSERT_NE(map.Find("proto"), nullptr);
  EXPECT_EQ(map.Find("proto")->integer, 3);
  EXPECT_EQ(map.Find("nope"), nullptr);
  EXPECT_EQ(R::Integer(1).Find("x"), nullptr);
  EXPECT_EQ(map.ToString(), "{\"proto\": (integer) 3, \"id\": (integer) 9}");
  EXPECT_EQ(Arr({R::Nil(), R::Error("ERR x")}).ToString(), "[(nil), (error) ERR x]");
}

// Random bytes, and valid input with random bytes flipped: the reader must end in a reply,
// a wait or an error, never crash or loop (a poor man's fuzz run, with a fixed seed).
TEST(ReplyReaderTest, RandomBytesNeverCrash) {
  std::mt19937 rng(12345);
  const std::string alphabet = "+-:$*%~>|_,#(=!\r\n0123456789-tfx?";
  std::string valid;
  for (const auto& c : ValidCases()) valid += c.input;
  for (int round = 0; round < 2000; ++round) {
    std::string input;
    if (round % 2 == 0) {
      std::size_t n = rng() % 64;
      for (std::size_t i = 0; i < n; ++i) input += alphabet[rng() % alphabet.size()];
    } else {
      input = valid;
      for (int flips = 0; flips < 3; ++flips) {
        input[rng() % input.size()] = alphabet[rng() % alphabet.size()];
      }
    }
    ReplyReaderLimits limits;
    limits.max_bulk_len = 1 << 16;
    Outcome o = Read({input}, limits);
    EXPECT_LE(o.replies.size(), input.size());
  }
}

TEST(RequestEncodingTest, Multibulk) {
  std::string out;
  AppendMultibulkHeader(&out, 3);
  AppendBulkArgument(&out, "SET");
  AppendBulkArgument(&out, "k");
  AppendBulkArgument(&out, std::string_view("a\0b", 3));
  EXPECT_EQ(out, std::string("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3\r\na\0b\r\n", 29));
}

}  // namespace
}  // namespace latch::protocol
