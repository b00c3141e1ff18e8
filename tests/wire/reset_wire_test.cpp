// RESET (Redis 6.2+) and the HELP replies of CONFIG and DEBUG, over real sockets. What can be
// compared byte for byte with redis-server is in the differential corpus (connection.txt,
// auth.txt, server.txt); this covers what needs a second client or latchd's own options.
#include <gtest/gtest.h>

#include <string>

#include "support/embedded_server.h"
#include "support/raw_connection.h"

namespace latch::test {
namespace {

TEST(ResetWire, DropsWatchesSoExecCommits) {
  EmbeddedServer server;
  RawConnection a(server.port()), b(server.port());
  ASSERT_EQ(a.Command("WATCH", "k"), "+OK\r\n");
  ASSERT_EQ(a.Command("RESET"), "+RESET\r\n");
  ASSERT_EQ(b.Command("SET", "k", "other"), "+OK\r\n");  // would abort a watching EXEC
  ASSERT_EQ(a.Command("MULTI"), "+OK\r\n");
  ASSERT_EQ(a.Command("SET", "k", "mine"), "+QUEUED\r\n");
  EXPECT_EQ(a.Command("EXEC"), "*1\r\n+OK\r\n");
  EXPECT_EQ(b.Command("GET", "k"), "$4\r\nmine\r\n");
}

TEST(ResetWire, BackToTheStateOfANewConnection) {
  Options o = EmbeddedServer::DefaultOptions();
  o.requirepass = "pw";
  EmbeddedServer server(o);
  RawConnection c(server.port());
  ASSERT_EQ(c.Command("AUTH", "pw"), "+OK\r\n");
  ASSERT_EQ(c.Command("CLIENT", "SETNAME", "worker").substr(0, 3), "+OK");
  ASSERT_EQ(c.Command("HELLO", "3").substr(0, 1), "%");
  ASSERT_EQ(c.Command("MULTI"), "+OK\r\n");
  ASSERT_EQ(c.Command("SET", "k", "v"), "+QUEUED\r\n");
  EXPECT_EQ(c.Command("RESET"), "+RESET\r\n");  // not queued
  EXPECT_EQ(c.Command("GET", "k"), "-NOAUTH Authentication required.\r\n");
  ASSERT_EQ(c.Command("AUTH", "pw"), "+OK\r\n");
  EXPECT_EQ(c.Command("EXEC"), "-ERR EXEC without MULTI\r\n");
  EXPECT_EQ(c.Command("GET", "k"), "$-1\r\n") << "RESP2 again, and SET was discarded";
  EXPECT_EQ(c.Command("CLIENT", "GETNAME"), "$-1\r\n");
  EXPECT_EQ(c.Command("RESET", "x"), "-ERR wrong number of arguments for 'reset' command\r\n");
}

TEST(ResetWire, DebugHelpListsLatchdSubcommands) {
  Options o = EmbeddedServer::DefaultOptions();
  o.enable_debug_command = true;
  EmbeddedServer server(o);
  RawConnection c(server.port());
  const std::string help = c.Command("DEBUG", "HELP");
  EXPECT_EQ(help.substr(0, help.find("\r\n", help.find("\r\n") + 2) + 2),
            "*12\r\n+DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n")
      << help;
  EXPECT_NE(help.find("+SLEEP <seconds>\r\n"), std::string::npos) << help;
  EXPECT_NE(help.find("+HELP\r\n+    Prints this help.\r\n"), std::string::npos) << help;
  EXPECT_EQ(c.Command("DEBUG", "HELP", "x"), "-ERR unknown subcommand 'HELP'. Try DEBUG HELP.\r\n");
}

}  // namespace
}  // namespace latch::test
