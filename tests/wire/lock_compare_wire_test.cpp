// Redis 8.4's compare-and-set / compare-and-delete over real sockets: SET with IFEQ, IFNE,
// IFDEQ, IFDNE (with and without GET, on present and missing keys), DELEX, DIGEST (checked
// against the vectors of Redis's documentation and test suite) and Valkey's DELIFEQ.
#include <gtest/gtest.h>

#include <cctype>
#include <string>
#include <vector>

#include "support/embedded_server.h"
#include "support/raw_connection.h"
#include "support/wire_expect.h"

namespace latch::test {
namespace {

const std::string kNil = "$-1\r\n";
const std::string kOk = "+OK\r\n";

class CompareWire : public ::testing::Test {
 protected:
  CompareWire() : c_(server_.port()) {}
  std::string Digest(const std::string& key) {
    std::string r = c_.Command("DIGEST", key);
    return r.size() == 23 ? r.substr(5, 16) : "<bad reply " + r + ">";
  }
  EmbeddedServer server_;
  RawConnection c_;
};

TEST_F(CompareWire, DigestMatchesKnownXxh3Vectors) {
  ASSERT_EQ(c_.Command("SET", "a", "Hello world"), kOk);
  EXPECT_EQ(c_.Command("DIGEST", "a"), Bulk("b6acb9d84a38ff74"));  // redis.io's example
  // Redis's test suite: a value whose digest has leading zeros keeps all 16 digits.
  ASSERT_EQ(c_.Command("SET", "z",
                       "v8lf0c11xh8ymlqztfd3eeq16kfn4sspw7fqmnuuq3k3t75em5wdizgcdw7uc26nnf961u2j"
                       "kfzkjytls2kwlj7626sd"),
            kOk);
  EXPECT_EQ(c_.Command("DIGEST", "z"), Bulk("00006c38adf31777"));
  EXPECT_EQ(c_.Command("DIGEST", "missing"), kNil);
  EXPECT_EQ(c_.Command("DIGEST"), "-ERR wrong number of arguments for 'digest' command\r\n");
}

struct SetCase {
  const char* cond;
  bool key_exists;
  bool matches;      // the condition's argument equals the current value / its digest
  bool expect_set;
};

// Every condition x key present/missing x matching/not, each with and without GET.
TEST_F(CompareWire, SetConditionMatrix) {
  const std::vector<SetCase> cases = {
      {"IFEQ", true, true, true},    {"IFEQ", true, false, false},
      {"IFEQ", false, false, false}, {"IFNE", true, true, false},
      {"IFNE", true, false, true},   {"IFNE", false, false, true},
      {"IFDEQ", true, true, true},   {"IFDEQ", true, false, false},
      {"IFDEQ", false, false, false}, {"IFDNE", true, true, false},
      {"IFDNE", true, false, true},  {"IFDNE", false, false, true},
  };
  ASSERT_EQ(c_.Command("SET", "probe", "old"), kOk);
  const std::string old_digest = Digest("probe");
  const std::string other_digest = "0123456789abcdef";
  for (const SetCase& tc : cases) {
    for (bool with_get : {false, true}) {
      SCOPED_TRACE(std::string(tc.cond) + (tc.key_exists ? " present" : " missing") +
                   (tc.matches ? " match" : " no-match") + (with_get ? " GET" : ""));
      c_.Command("DEL", "k");
      if (tc.key_exists) {
        ASSERT_EQ(c_.Command("SET", "k", "old"), kOk);
      }
      bool digest = std::string(tc.cond).find('D') != std::string::npos;
      std::string arg = digest ? (tc.matches ? old_digest : other_digest)
                               : (tc.matches ? "old" : "other");
      std::vector<std::string> cmd = {"SET", "k", "new", tc.cond, arg};
      if (with_get) cmd.push_back("GET");
      std::string reply = c_.CommandArgs(cmd);
      if (with_get) {
        EXPECT_EQ(reply, tc.key_exists ? Bulk("old") : kNil);
      } else {
        EXPECT_EQ(reply, tc.expect_set ? kOk : kNil);
      }
      std::string after = tc.expect_set ? Bulk("new") : tc.key_exists ? Bulk("old") : kNil;
      EXPECT_EQ(c_.Command("GET", "k"), after);
    }
  }
}

TEST_F(CompareWire, SetConditionsWithExpiryAndOptionOrder) {
  ASSERT_EQ(c_.Command("SET", "k", "old"), kOk);
  EXPECT_EQ(c_.Command("SET", "k", "new", "PX", "5000", "ifeq", "old"), kOk);
  EXPECT_EQ(c_.Command("PTTL", "k"), ":5000\r\n");
  EXPECT_EQ(c_.Command("SET", "k", "newer", "GET", "IfNe", "zzz", "KEEPTTL"), Bulk("new"));
  EXPECT_EQ(c_.Command("PTTL", "k"), ":5000\r\n");
  EXPECT_EQ(c_.Command("SET", "k", "x", "IFEQ", "nope", "EX", "10"), kNil);
  EXPECT_EQ(c_.Command("PTTL", "k"), ":5000\r\n");
}

TEST_F(CompareWire, SetConditionsAreMutuallyExclusive) {
  ASSERT_EQ(c_.Command("SET", "k", "v"), kOk);
  const std::string syntax = "-ERR syntax error\r\n";
  EXPECT_EQ(c_.Command("SET", "k", "v", "NX", "IFEQ", "v"), syntax);
  EXPECT_EQ(c_.Command("SET", "k", "v", "IFEQ", "v", "XX"), syntax);
  EXPECT_EQ(c_.Command("SET", "k", "v", "IFEQ", "v", "IFNE", "w"), syntax);
  EXPECT_EQ(c_.Command("SET", "k", "v", "IFDEQ", "0123456789abcdef", "IFEQ", "v"), syntax);
  EXPECT_EQ(c_.Command("SET", "k", "v", "IFEQ"), syntax);  // no argument
  // Redis 7's rules are unchanged: NX NX is fine, NX XX is not.
  EXPECT_EQ(c_.Command("SET", "n", "v", "NX", "NX"), kOk);
  EXPECT_EQ(c_.Command("SET", "n", "v", "NX", "XX"), syntax);
}

TEST_F(CompareWire, DigestArgumentsAreCaseInsensitiveAndExactly16Hex) {
  ASSERT_EQ(c_.Command("SET", "k", "hello"), kOk);
  std::string d = Digest("k");
  std::string upper = d;
  for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  EXPECT_EQ(c_.Command("SET", "k", "world", "IFDEQ", upper), kOk);
  const std::string bad = "-ERR must be exactly 16 hexadecimal characters\r\n";
  for (const std::string& digest : {std::string(""), std::string("123"),
                                    std::string("0123456789abcdef0"),
                                    std::string("0123456789abcdeg")}) {
    EXPECT_EQ(c_.Command("SET", "k", "x", "IFDEQ", digest), bad) << digest;
    EXPECT_EQ(c_.Command("SET", "k", "x", "IFDNE", digest, "GET"), bad) << digest;
    EXPECT_EQ(c_.Command("DELEX", "k", "IFDEQ", digest), bad) << digest;
    EXPECT_EQ(c_.Command("DELEX", "k", "IFDNE", digest), bad) << digest;
  }
  EXPECT_EQ(c_.Command("GET", "k"), Bulk("world"));
  // As in Redis, the format is checked only against an existing value.
  EXPECT_EQ(c_.Command("DELEX", "missing", "IFDEQ", "123"), ":0\r\n");
  EXPECT_EQ(c_.Command("SET", "missing", "v", "IFDNE", "123"), kOk);
}

TEST_F(CompareWire, DelEx) {
  ASSERT_EQ(c_.Command("SET", "k", "hello"), kOk);
  EXPECT_EQ(c_.Command("DELEX", "k"), ":1\r\n");
  EXPECT_EQ(c_.Command("DELEX", "k"), ":0\r\n");
  ASSERT_EQ(c_.Command("SET", "k", "hello"), kOk);
  EXPECT_EQ(c_.Command("DELEX", "k", "IFEQ", "world"), ":0\r\n");
  EXPECT_EQ(c_.Command("DELEX", "k", "IFNE", "hello"), ":0\r\n");
  EXPECT_EQ(c_.Command("DELEX", "k", "IFDNE", Digest("k")), ":0\r\n");
  EXPECT_EQ(c_.Command("DELEX", "k", "IFDEQ", "0123456789abcdef"), ":0\r\n");
  EXPECT_EQ(c_.Command("GET", "k"), Bulk("hello"));
  EXPECT_EQ(c_.Command("DELEX", "k", "ifeq", "hello"), ":1\r\n");
  ASSERT_EQ(c_.Command("SET", "k", "hello"), kOk);
  EXPECT_EQ(c_.Command("DELEX", "k", "IFNE", "world"), ":1\r\n");
  ASSERT_EQ(c_.Command("SET", "k", "hello"), kOk);
  EXPECT_EQ(c_.Command("DELEX", "k", "IFDEQ", Digest("k")), ":1\r\n");
  ASSERT_EQ(c_.Command("SET", "k", "hello"), kOk);
  EXPECT_EQ(c_.Command("DELEX", "k", "IFDNE", "0123456789ABCDEF"), ":1\r\n");
  EXPECT_EQ(c_.Command("DELEX", "k", "IFEQ", "x"), ":0\r\n");  // missing key

  const std::string arity = "-ERR wrong number of arguments for 'delex' command\r\n";
  EXPECT_EQ(c_.Command("DELEX"), arity);
  EXPECT_EQ(c_.Command("DELEX", "k", "IFEQ"), arity);
  EXPECT_EQ(c_.Command("DELEX", "k", "IFEQ", "v", "extra"), arity);
  EXPECT_EQ(c_.Command("DELEX", "k", "IFGT", "v"),
            "-ERR Invalid condition. Use IFEQ, IFNE, IFDEQ, or IFDNE\r\n");
}

TEST_F(CompareWire, DelIfEq) {
  ASSERT_EQ(c_.Command("SET", "k", "token"), kOk);
  EXPECT_EQ(c_.Command("DELIFEQ", "k", "other"), ":0\r\n");
  EXPECT_EQ(c_.Command("GET", "k"), Bulk("token"));
  EXPECT_EQ(c_.Command("DELIFEQ", "k", "token"), ":1\r\n");
  EXPECT_EQ(c_.Command("DELIFEQ", "k", "token"), ":0\r\n");
  EXPECT_EQ(c_.Command("DELIFEQ", "k"),
            "-ERR wrong number of arguments for 'delifeq' command\r\n");
}

TEST_F(CompareWire, ExpiredKeysCountAsMissing) {
  ASSERT_EQ(c_.Command("SET", "k", "v", "PX", "100"), kOk);
  server_.clock().advance(100);
  EXPECT_EQ(c_.Command("SET", "k", "w", "IFEQ", "v"), kNil);
  EXPECT_EQ(c_.Command("DIGEST", "k"), kNil);
  EXPECT_EQ(c_.Command("DELIFEQ", "k", "v"), ":0\r\n");
}

}  // namespace
}  // namespace latch::test
