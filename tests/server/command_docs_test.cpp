// COMMAND DOCS argument notation: every registered command's notation must expand, and the
// expansion must have the shape redis-cli reads its hints from.
#include <gtest/gtest.h>

#include <string>

#include "commands/command_args.h"
#include "commands/command_table.h"

namespace latch {

std::string_view ArgumentNotation(std::string_view name);

namespace {

TEST(CommandDocs, EveryRegisteredNotationParses) {
  CommandTable table;
  int with_notation = 0;
  auto check = [&](const CommandSpec& c) {
    std::string_view n = ArgumentNotation(c.name);
    if (n.empty()) return;
    ++with_notation;
    std::string out;
    protocol::ReplyWriter w(&out, 3);
    EXPECT_TRUE(WriteCommandArguments(w, n)) << c.name << ": " << n;
  };
  table.ForEach([&](const CommandSpec& c) {
    check(c);
    for (const auto& s : c.subcommands) check(s);
  });
  EXPECT_GT(with_notation, 30);
}

TEST(CommandDocs, ExpandsTokensOneofAndFlags) {
  std::string out;
  protocol::ReplyWriter w(&out, 3);
  ASSERT_TRUE(WriteCommandArguments(w, "key:key [condition:(NX|EX=seconds:integer)] arg:string*"));
  EXPECT_EQ(out,
            "*3\r\n"
            "%2\r\n$4\r\nname\r\n$3\r\nkey\r\n$4\r\ntype\r\n$3\r\nkey\r\n"
            "%4\r\n$4\r\nname\r\n$9\r\ncondition\r\n$4\r\ntype\r\n$5\r\noneof\r\n"
            "$5\r\nflags\r\n~1\r\n+optional\r\n$9\r\narguments\r\n*2\r\n"
            "%3\r\n$4\r\nname\r\n$2\r\nnx\r\n$4\r\ntype\r\n$10\r\npure-token\r\n"
            "$5\r\ntoken\r\n$2\r\nNX\r\n"
            "%3\r\n$4\r\nname\r\n$7\r\nseconds\r\n$4\r\ntype\r\n$7\r\ninteger\r\n"
            "$5\r\ntoken\r\n$2\r\nEX\r\n"
            "%3\r\n$4\r\nname\r\n$3\r\narg\r\n$4\r\ntype\r\n$6\r\nstring\r\n"
            "$5\r\nflags\r\n~1\r\n+multiple\r\n");
}

TEST(CommandDocs, RejectsMalformedNotation) {
  for (std::string_view bad : {"[key:key", "name:(A|", "{block key:key", ":x", "a:b)"}) {
    std::string out;
    protocol::ReplyWriter w(&out, 2);
    EXPECT_FALSE(WriteCommandArguments(w, bad)) << bad;
    EXPECT_TRUE(out.empty()) << bad;
  }
}

}  // namespace
}  // namespace latch
