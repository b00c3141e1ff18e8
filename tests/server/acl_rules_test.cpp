// The ACL rule language and checks without a socket: SHA-256 digests, rules to a User and
// back (what ACL LIST and ACL SAVE write must rebuild the same user), and the checks the
// dispatcher makes. Wire behaviour and Redis's texts: tests/wire/acl_wire_test.cpp and
// corpus/acl.txt.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "acl/command_index.h"
#include "acl/permission.h"
#include "acl/sha256.h"
#include "acl/user.h"
#include "commands/command_table.h"

namespace latch::acl {
namespace {

TEST(AclSha256, KnownDigests) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // 56 bytes: the length no longer fits the first padding block.
  EXPECT_EQ(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(Sha256Hex(std::string(1000, 'a')),
            "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3");
}

class AclRules : public ::testing::Test {
 protected:
  User Make(const std::vector<std::string>& rules) {
    User u = NewUser("u", idx_);
    for (const auto& r : rules) {
      EXPECT_EQ(ApplyRule(u, r, idx_), std::nullopt) << r;
    }
    return u;
  }
  Denial Check(const User& u, const std::vector<std::string_view>& args) {
    const CommandSpec* spec = table_.Find(args[0]);
    std::size_t pos = 0;
    return CheckCommand(u, *idx_.Of(spec), args, &pos);
  }
  CommandTable table_;
  CommandIndex idx_{table_};
};

TEST_F(AclRules, DescriptionRebuildsTheSameUser) {
  const std::vector<std::vector<std::string>> cases = {
      {"on", ">pw", "~lock:payments:*", "%R~lock:*", "-@all", "+@lock", "+get"},
      {"on", "nopass", "allkeys", "+@all", "-@dangerous", "-del"},
      {"off", "resetchannels", "&orders:*", "+@read", "+client|id", "-@write"},
      {"reset", "on", "#" + std::string(64, 'a'), "+@all", "-client", "+client|info"}};
  for (const auto& rules : cases) {
    const User u = Make(rules);
    const std::string text = DescribeUser(u, idx_);
    User again = NewUser("u", idx_);
    std::string word;
    for (std::size_t i = 0; i <= text.size(); ++i) {
      if (i == text.size() || text[i] == ' ') {
        EXPECT_EQ(ApplyRule(again, word, idx_), std::nullopt) << word;
        word.clear();
      } else {
        word.push_back(text[i]);
      }
    }
    EXPECT_EQ(DescribeUser(again, idx_), text);
    for (const auto& e : idx_.entries()) {
      EXPECT_EQ(again.Allowed(e.id), u.Allowed(e.id)) << e.spec->name << " in " << text;
    }
  }
}

TEST_F(AclRules, ReadAndWritePatternsFollowTheCommand) {
  const User u = Make({"on", "%R~lock:*", "~lock:mine:*", "+@all"});
  EXPECT_EQ(Check(u, {"get", "lock:theirs:1"}), Denial::kNone);
  EXPECT_EQ(Check(u, {"del", "lock:theirs:1"}), Denial::kKey);
  EXPECT_EQ(Check(u, {"lock.release", "lock:theirs:1", "tok"}), Denial::kKey);
  EXPECT_EQ(Check(u, {"lock.release", "lock:mine:1", "tok"}), Denial::kNone);
  EXPECT_EQ(Check(u, {"del", "lock:mine:1", "lock:theirs:1"}), Denial::kKey);
  EXPECT_EQ(Check(u, {"eval", "return 1", "1", "lock:theirs:1"}), Denial::kKey);
  EXPECT_EQ(Check(u, {"eval_ro", "return 1", "1", "lock:theirs:1"}), Denial::kNone);
  EXPECT_EQ(Check(u, {"eval", "return 1", "0"}), Denial::kNone);
}

TEST_F(AclRules, OnlyAllCommandsKeysAndChannelsIsUnrestricted) {
  EXPECT_TRUE(Make({"+@all", "~*", "&*"}).unrestricted);
  EXPECT_FALSE(Make({"+@all", "~*"}).unrestricted);
  EXPECT_FALSE(Make({"+@all", "~*", "&*", "-del"}).unrestricted);
  const User u = Make({"-@all", "+@lock"});
  EXPECT_EQ(Check(u, {"auth", "x"}), Denial::kNone) << "AUTH needs no permission";
  EXPECT_EQ(Check(u, {"get", "k"}), Denial::kCommand);
}

TEST_F(AclRules, SelectorsAndFirstArgsAreRefusedWithAReason) {
  User u = NewUser("u", idx_);
  EXPECT_NE(ApplyRule(u, "(~x +get)", idx_), std::nullopt);
  EXPECT_NE(ApplyRule(u, "+select|0", idx_), std::nullopt);
  EXPECT_EQ(ApplyRule(u, "clearselectors", idx_), std::nullopt);
}

}  // namespace
}  // namespace latch::acl
