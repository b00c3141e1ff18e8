// The REST endpoint's pure pieces (server/src/rest/): the JSON argument reader, the URL
// decoder and the JSON/base64 writer, on inputs the wire tests do not reach easily.
#include <gtest/gtest.h>

#include <string>

#include "rest/json_args.h"
#include "rest/json_reply.h"
#include "rest/url_args.h"

namespace latch::rest {
namespace {

std::string Base64(std::string_view s) {
  std::string out;
  AppendBase64(s, &out);
  return out;
}

std::string JsonString(std::string_view s) {
  std::string out;
  AppendJsonString(s, &out);
  return out;
}

TEST(RestJson, Base64OfEveryTailLength) {
  EXPECT_EQ(Base64(""), "");
  EXPECT_EQ(Base64("f"), "Zg==");
  EXPECT_EQ(Base64("fo"), "Zm8=");
  EXPECT_EQ(Base64("foo"), "Zm9v");
  EXPECT_EQ(Base64("foob"), "Zm9vYg==");
  EXPECT_EQ(Base64(std::string("\xff\xfe\x00", 3)), "//4A");
}

TEST(RestJson, StringsKeepValidUtf8AndReplaceTheRest) {
  EXPECT_EQ(JsonString("a\"\\\n\t\x01"), "\"a\\\"\\\\\\n\\t\\u0001\"");
  EXPECT_EQ(JsonString("\xC3\xA9\xE2\x9C\x93\xF0\x9F\x98\x80"),
            "\"\xC3\xA9\xE2\x9C\x93\xF0\x9F\x98\x80\"");
  const std::string fffd = "\xEF\xBF\xBD";
  EXPECT_EQ(JsonString("\xC0\xAF"), "\"" + fffd + fffd + "\"") << "overlong";
  EXPECT_EQ(JsonString("\xED\xA0\x80"), "\"" + fffd + fffd + fffd + "\"") << "surrogate";
  EXPECT_EQ(JsonString("\xF4\x90\x80\x80"), "\"" + fffd + fffd + fffd + fffd + "\"");
  EXPECT_EQ(JsonString("ab\xE2\x9C"), "\"ab" + fffd + fffd + "\"") << "cut at the end";
}

TEST(RestJson, ArgumentsFromJson) {
  Args args;
  EXPECT_EQ(ParseJsonCommand(R"(["a",-0.5e-3,false,"\u00e9\ud83d\ude00\ud800x"])", 100, &args),
            std::nullopt);
  EXPECT_EQ(args, (Args{"a", "-0.5e-3", "false", "\xC3\xA9\xF0\x9F\x98\x80\xEF\xBF\xBDx"}));
  EXPECT_EQ(ParseJsonCommand(R"(["abcd"])", 3, &args),
            std::optional<std::string>("ERR Protocol error: invalid bulk length"));
  EXPECT_NE(ParseJsonCommand(R"(["a",1.])", 100, &args), std::nullopt);
  EXPECT_NE(ParseJsonCommand(R"(["a",-])", 100, &args), std::nullopt);
  EXPECT_NE(ParseJsonCommand(R"(["\u12"])", 100, &args), std::nullopt);
  std::vector<Args> list;
  EXPECT_EQ(ParseJsonCommandList(" [ [\"a\"] ,[\"b\",1] ] ", 100, &list), std::nullopt);
  EXPECT_EQ(list, (std::vector<Args>{{"a"}, {"b", "1"}}));
}

TEST(RestJson, UrlArguments) {
  Args args;
  EXPECT_EQ(PathArgs("/set/a%20b/c+d%2F", 100, &args), std::nullopt);
  EXPECT_EQ(args, (Args{"set", "a b", "c+d/"}));
  EXPECT_NE(PathArgs("/get/%4", 100, &args), std::nullopt);
  EXPECT_NE(PathArgs("/get/%G0", 100, &args), std::nullopt);
  args.clear();
  EXPECT_EQ(QueryArgs("EX=10&_token=x&NX&&a+b=c%26d", 100, &args), std::nullopt);
  EXPECT_EQ(args, (Args{"EX", "10", "NX", "a b", "c&d"}));
  EXPECT_EQ(QueryToken("a=1&_token=t%2Bk"), std::optional<std::string>("t+k"));
  EXPECT_EQ(QueryToken("a=1"), std::nullopt);
}

}  // namespace
}  // namespace latch::rest
