// latch-cli as a shell script uses it: exit codes and output against a real server.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <string>

#include "backends.h"

namespace latch::test {
namespace {

struct CliRun {
  int status = -1;
  std::string out;
};

CliRun Cli(const std::string& url, const std::string& args) {
  std::string cmd = std::string(LATCH_CLI_PATH) + " -u " + url + " " + args + " 2>/dev/null";
  CliRun run;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return run;
  char buf[512];
  // Bounded by the tool's own call timeout (2 s by default).
  while (std::fgets(buf, sizeof(buf), p) != nullptr) run.out += buf;
  int st = ::pclose(p);
  run.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return run;
}

TEST(LatchCliTest, LockExtendUnlockInfo) {
  auto redis = Backend::Start(BackendKind::kRedis);
  ASSERT_TRUE(redis->ok()) << redis->error();
  std::string url = redis->url();
  CliRun lock = Cli(url, "lock deploy 60000");
  ASSERT_EQ(lock.status, 0);
  ASSERT_GE(lock.out.size(), 33u);
  std::string owner = lock.out.substr(0, 32);
  EXPECT_EQ(lock.out.substr(32), " -\n");  // Redis gives no fencing token

  EXPECT_EQ(Cli(url, "lock deploy 60000 --wait 100").status, 1);
  CliRun ext = Cli(url, "extend deploy " + owner + " 90000");
  EXPECT_EQ(ext.status, 0);
  EXPECT_EQ(ext.out, "ok\n");
  CliRun info = Cli(url, "info deploy");
  EXPECT_EQ(info.status, 0);
  EXPECT_NE(info.out.find("owner: \"" + owner + "\""), std::string::npos) << info.out;
  CliRun wrong = Cli(url, "unlock deploy someone-else");
  EXPECT_EQ(wrong.status, 1);
  EXPECT_EQ(wrong.out, "not-owner\n");
  CliRun unlock = Cli(url, "unlock deploy " + owner);
  EXPECT_EQ(unlock.status, 0);
  EXPECT_EQ(unlock.out, "ok\n");
  CliRun again = Cli(url, "unlock deploy " + owner);
  EXPECT_EQ(again.status, 1);
  EXPECT_EQ(again.out, "lost\n");
  EXPECT_EQ(Cli(url, "bogus").status, 2);
  redis->Kill();
  EXPECT_EQ(Cli(url, "info").status, 2);
}

}  // namespace
}  // namespace latch::test
