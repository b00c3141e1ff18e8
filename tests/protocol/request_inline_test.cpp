// Inline requests ("PING\r\n", quoted arguments as telnet or redis-cli users type them).
// Every outcome here was checked against redis-server 7.0.15, the split rows by sending
// "RPUSH lst <line>\n" and reading the list back.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "latch/protocol/request_parser.h"
#include "latch/protocol/split_args.h"
#include "protocol/request_parser_check.h"
#include "protocol/request_parser_harness.h"

namespace latch::protocol::testing {
namespace {

using namespace std::string_literals;

constexpr std::size_t K = kInlineMaxSize;
const std::string kUnbalanced = "ERR Protocol error: unbalanced quotes in request";
const std::string kTooBig = "ERR Protocol error: too big inline request";

std::vector<Case> InlineCases() {
  return {
      {"CRLF", "PING\r\n", {Cmd({"PING"}, 6)}},
      {"bare LF", "PING\n", {Cmd({"PING"}, 5)}},
      {"pipeline", "GET k\nGET j\r\n", {Cmd({"GET", "k"}, 6), Cmd({"GET", "j"}, 7)}},
      {"no line end yet", "PING", {}, 4},
      {"CR without LF yet", "PING\r", {}, 5},
      {"partial after full", "PING\nGE", {Cmd({"PING"}, 5)}, 2},
      {"empty CRLF line", "\r\n", {Empty(2)}},
      {"empty LF line", "\n", {Empty(1)}},
      {"blank line", " \t\r\n", {Empty(4)}},
      {"empty lines before command", "\n\r\nPING\n", {Empty(1), Empty(2), Cmd({"PING"}, 5)}},
      {"only one CR is stripped, others separate", "PING\r\r\n", {Cmd({"PING"}, 7)}},
      {"CR inside the line separates", "GET\rk\n", {Cmd({"GET", "k"}, 6)}},
      {"extra blanks", "  SET  k \t v  \n", {Cmd({"SET", "k", "v"}, 15)}},
      {"double quotes", "ECHO \"a b\"\r\n", {Cmd({"ECHO", "a b"}, 12)}},
      {"escapes", "ECHO \"\\x41\\n\" 'it\\'s'\n", {Cmd({"ECHO", "A\n", "it's"}, 22)}},
      {"quoted NUL byte", "ECHO \"\\x00\"\n", {Cmd({"ECHO", "\0"s}, 12)}},
      {"unterminated quote", "ECHO \"abc\r\n", {Err(kUnbalanced)}, 11},
      {"closing double quote then letter", "ECHO \"a\"b\n", {Err(kUnbalanced)}, 10},
      {"closing single quote then letter", "ECHO 'a'b\n", {Err(kUnbalanced)}, 10},
      {"error after good line", "PING\nECHO 'x\n", {Cmd({"PING"}, 5), Err(kUnbalanced)}, 8},
      {"inline and multibulk mixed",
       "PING\n*1\r\n$4\r\nPING\r\nECHO x\r\n",
       {Cmd({"PING"}, 5), Cmd({"PING"}, 14), Cmd({"ECHO", "x"}, 8)}},
      // strchr() in Redis stops at a NUL, so the '\n' after it is never found.
      {"NUL hides the line end", "PING\0\nPING\n"s, {}, 11},
      {"NUL then too big", "PING\0\n"s + std::string(K, 'x'), {Err(kTooBig)}, K + 6},
      {"64 KiB without LF waits", std::string(K, 'P'), {}, K},
      {"over 64 KiB without LF", std::string(K + 1, 'P'), {Err(kTooBig)}, K + 1},
      {"over 64 KiB after a command",
       "PING\n" + std::string(K + 1, 'P'),
       {Cmd({"PING"}, 5), Err(kTooBig)},
       K + 1},
      // Redis checks the size only while no '\n' is there: a long line that arrives in
      // one read is accepted, the same line arriving in pieces may be refused (below).
      {"long line in one read",
       std::string(K + 10, 'P') + "\n",
       {Cmd({std::string(K + 10, 'P')}, K + 11)},
       0,
       0,
       {},
       /*split_invariant=*/false},
  };
}

TEST(RequestParserInline, Table) {
  for (const Case& c : InlineCases()) CheckCase(c);
}

TEST(RequestParserInline, LongLineInPiecesIsRefused) {
  const std::string line = std::string(K + 10, 'P') + "\n";
  const Outcome split = FeedSplitAt({}, line, K + 1);
  ASSERT_EQ(split.events.size(), 1u) << Describe(split);
  EXPECT_EQ(split.events[0].error, kTooBig);
  const Outcome fits = FeedSplitAt({}, line, K);
  ASSERT_EQ(fits.events.size(), 1u) << Describe(fits);
  EXPECT_EQ(fits.events[0].result, RequestParser::Result::kCommand);
}

TEST(RequestParserMultibulk, LongCountLineInPiecesIsRefused) {
  const std::string line = "*" + std::string(K + 10, '1') + "\r";
  const Outcome split = FeedSplitAt({}, line, K + 2);
  ASSERT_EQ(split.events.size(), 1u) << Describe(split);
  EXPECT_EQ(split.events[0].error, "ERR Protocol error: too big mbulk count string");
}

TEST(RequestParserInline, ArgsOutliveNothingButTheParser) {
  // Inline args are unquoted copies owned by the parser, not views of the buffer.
  RequestParser parser;
  std::string buf = "ECHO \"x y\"\n";
  ASSERT_EQ(parser.Parse(buf), RequestParser::Result::kCommand);
  buf.assign(buf.size(), '#');
  ASSERT_EQ(parser.args().size(), 2u);
  EXPECT_EQ(parser.args()[1], "x y");
}

struct SplitCase {
  std::string line;
  std::optional<std::vector<std::string>> args;  // nullopt: unbalanced quotes
};

std::vector<SplitCase> SplitCases() {
  const auto bad = std::nullopt;
  return {
      {"", std::vector<std::string>{}},
      {"a b  c", {{"a", "b", "c"}}},
      {"  x\t\ty \r z ", {{"x", "y", "z"}}},
      {"\"\\n\\r\\t\\b\\a\\\\\\\"\\q\"", {{"\n\r\t\b\a\\\"q"}}},
      {"\"\\x41\\x4a\\x4A\\xff\\x00\"", {{"AJJ\xff\0"s}}},
      {"\"\\x4g\"", {{"x4g"}}},  // not two hex digits: "\x" is an ordinary escape
      {"\"\\xA\"", {{"xA"}}},
      {"\"\\x\"", {{"x"}}},
      {"\"a\\\"\"", {{"a\""}}},
      {"'it\\'s'", {{"it's"}}},
      {"'a\\nb'", {{"a\\nb"}}},  // single quotes keep other backslashes
      {"'a\\\\b'", {{"a\\\\b"}}},
      {"'\\\\'", bad},             // "\'" escapes the would-be closing quote
      {"ab\"c d\"", {{"abc d"}}},  // a quote may open in the middle of a token
      {"\"\"", {{""}}},
      {"''", {{""}}},
      {"a\vb", {{"a\vb"}}},  // \v and \f do not end a token...
      {"\v\fa", {{"a"}}},    // ...but are skipped between tokens
      {"\"a\"\v", {{"a"}}},  // and may follow a closing quote
      {"\"a\"\tb", {{"a", "b"}}},
      {"\xff\xfe", {{"\xff\xfe"}}},
      {"\"a\"b", bad},
      {"'a'b", bad},
      {"\"a b\"c", bad},
      {"a\"b\"c", bad},
      {"ab'c d'e", bad},
      {"\"abc", bad},
      {"'abc", bad},
      {"\"abc\\\"", bad},
      {"\"a\\", bad},
      {"a\0b"s, {{"a"}}},  // as in C, a NUL ends the line (Parse never passes one)
  };
}

TEST(SplitArgs, Table) {
  std::vector<std::string> out = {"stale", "values", "to", "overwrite"};
  for (const SplitCase& c : SplitCases()) {
    SCOPED_TRACE(Escape(c.line));
    const bool ok = SplitArgs(c.line, &out);
    ASSERT_EQ(ok, c.args.has_value());
    if (ok) {
      EXPECT_EQ(out, *c.args);
    }
  }
}

}  // namespace
}  // namespace latch::protocol::testing
