// Config-file lines are split by the same function as inline requests (Redis splits both
// with sdssplitargs): \v and \f between arguments are skipped, inside an unquoted argument
// they are part of it. Checked against redis-server 7.0.15: `requirepass a\fb` in a config
// file makes "a\fb" the password; `port 6380\v` is refused as not an integer.
#include "latch/protocol/split_args.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "config/config_error.h"
#include "config/config_parser.h"

namespace latch::config {
namespace {

using V = std::vector<std::string>;

TEST(SplitArgsShared, ConfigLineKeepsVerticalTabAndFormFeedInsideAnArgument) {
  EXPECT_EQ(SplitConfigLine("requirepass a\fb"), (V{"requirepass", "a\fb"}));
  EXPECT_EQ(SplitConfigLine("x\vy z"), (V{"x\vy", "z"}));
  EXPECT_EQ(SplitConfigLine("\v\fport \f 6380"), (V{"port", "6380"}));  // skipped between
}

TEST(SplitArgsShared, ConfigAndInlineAgreeOnEveryLine) {
  const std::string_view lines[] = {
      "a\fb c",    "a\vb",   " \v x \f ", "\"q\\x41\" 'it\\'s'",
      "ab\"c d\"", "\"open", "'x'y",      std::string_view("a\0b c", 5)};
  for (const std::string_view line : lines) {
    V inline_args;
    const bool ok = protocol::SplitArgs(line, &inline_args);
    const auto config_args = SplitConfigLine(line);
    ASSERT_EQ(config_args.has_value(), ok) << line;
    if (ok) {
      EXPECT_EQ(*config_args, inline_args) << line;
    }
  }
}

TEST(SplitArgsShared, ConfigFileTakesThePasswordRedisTakes) {
  Options o;
  ApplyConfigText("requirepass pass\fword\n", "test", o);
  EXPECT_EQ(o.requirepass, "pass\fword");
  Options p;
  EXPECT_THROW(ApplyConfigText("port 6380\v\n", "test", p), ConfigError);
}

// MONITOR and CONFIG REWRITE write arguments with AppendQuotedArg; SplitArgs must read back
// exactly the bytes that were quoted, escapes and all.
TEST(SplitArgsShared, QuotedArgumentsReadBackUnchanged) {
  const std::string samples[] = {"", "plain", "two words", "q\"uote", "back\\slash",
                                 std::string("nul\0byte", 8), "\a\b\t\n\r", "\x01\x7f\xff"};
  for (const std::string& arg : samples) {
    std::string line;
    protocol::AppendQuotedArg(&line, arg);
    std::vector<std::string> out;
    ASSERT_TRUE(protocol::SplitArgs(line, &out)) << line;
    ASSERT_EQ(out.size(), 1u) << line;
    EXPECT_EQ(out[0], arg) << line;
  }
}

}  // namespace
}  // namespace latch::config
