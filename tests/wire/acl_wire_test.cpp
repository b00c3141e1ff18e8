// ACL users over real sockets: what the differential corpus (corpus/acl.txt) cannot compare
// with redis-server: latchd's @lock category, two teams sharing one server, the `user`
// directive and the aclfile, DELUSER closing a user's connections, EXEC after the rules
// changed, CLIENT LIST's user= and the INFO counters.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "support/embedded_server.h"
#include "support/raw_connection.h"

namespace latch::test {
namespace {

// The integer after "field:" in an INFO reply, -1 when absent.
long long InfoField(RawConnection& c, const std::string& field) {
  const std::string info = c.Command("INFO", "stats");
  const auto at = info.find(field + ":");
  if (at == std::string::npos) return -1;
  return std::stoll(info.substr(at + field.size() + 1));
}

// Two teams' services on one latchd: payments may take and release its locks, reporting
// may only read; neither can touch the other's keys, whatever command it tries.
TEST(AclWire, OneTeamCannotReleaseAnotherTeamsLocks) {
  EmbeddedServer server;
  RawConnection admin(server.port());
  ASSERT_EQ(admin.Command("ACL", "SETUSER", "payments", "on", ">pay", "~lock:payments:*", "-@all",
                          "+@lock", "+get", "+set", "+del"),
            "+OK\r\n");
  ASSERT_EQ(admin.Command("ACL", "SETUSER", "reporting", "on", ">rep", "~lock:reporting:*",
                          "%R~lock:*", "-@all", "+@lock", "+@read", "+del"),
            "+OK\r\n");
  RawConnection pay(server.port()), rep(server.port());
  ASSERT_EQ(pay.Command("AUTH", "payments", "pay"), "+OK\r\n");
  ASSERT_EQ(rep.Command("AUTH", "reporting", "rep"), "+OK\r\n");
  ASSERT_EQ(pay.Command("LOCK.ACQUIRE", "lock:payments:42", "tok", "10000").substr(0, 1), ":");
  const std::string kKeyDenied =
      "-NOPERM this user has no permissions to access one of the keys used as arguments\r\n";
  EXPECT_EQ(rep.Command("DEL", "lock:payments:42"), kKeyDenied);
  EXPECT_EQ(rep.Command("LOCK.RELEASE", "lock:payments:42", "tok"), kKeyDenied);
  EXPECT_EQ(rep.Command("LOCK.EXTEND", "lock:payments:42", "tok", "99999"), kKeyDenied);
  EXPECT_EQ(rep.Command("SET", "lock:payments:42", "x"),
            "-NOPERM this user has no permissions to run the 'set' command\r\n");
  EXPECT_EQ(rep.Command("EVAL", "return redis.call('del', KEYS[1])", "0"),
            "-NOPERM this user has no permissions to run the 'eval' command\r\n");
  EXPECT_EQ(rep.Command("GET", "lock:payments:42"), "$3\r\ntok\r\n") << "%R~lock:* reads";
  EXPECT_EQ(pay.Command("GET", "lock:reporting:1"), kKeyDenied);
  EXPECT_EQ(pay.Command("LOCK.RELEASE", "lock:payments:42", "tok"), ":1\r\n");
  EXPECT_EQ(InfoField(admin, "acl_access_denied_key"), 4);
  EXPECT_EQ(InfoField(admin, "acl_access_denied_cmd"), 2);
}

// @lock is latchd's category; COMMAND INFO shows the categories ACL rules use.
TEST(AclWire, LockCategoryListsTheLockCommands) {
  EmbeddedServer server;
  RawConnection c(server.port());
  const std::string cat = c.Command("ACL", "CAT", "lock");
  EXPECT_NE(cat.find("lock.acquire"), std::string::npos) << cat;
  EXPECT_NE(cat.find("lock.release"), std::string::npos) << cat;
  EXPECT_EQ(cat.find("$3\r\nget"), std::string::npos) << cat;
  EXPECT_NE(c.Command("ACL", "CAT").find("$4\r\nlock\r\n"), std::string::npos);
  const std::string info = c.Command("COMMAND", "INFO", "lock.release");
  EXPECT_NE(info.find("+@write\r\n"), std::string::npos) << info;
  EXPECT_NE(info.find("+@lock\r\n"), std::string::npos) << info;
  const std::string get = c.Command("COMMAND", "INFO", "get");
  EXPECT_NE(get.find("*3\r\n+@read\r\n+@string\r\n+@fast\r\n"), std::string::npos) << get;
}

TEST(AclWire, DelUserClosesItsConnections) {
  EmbeddedServer server;
  RawConnection admin(server.port()), a(server.port()), b(server.port());
  ASSERT_EQ(admin.Command("ACL", "SETUSER", "temp", "on", "nopass", "~*", "+@all"), "+OK\r\n");
  ASSERT_EQ(a.Command("AUTH", "temp", "x"), "+OK\r\n");
  ASSERT_EQ(b.Command("AUTH", "temp", "x"), "+OK\r\n");
  const std::string list = admin.Command("CLIENT", "LIST");
  EXPECT_NE(list.find("user=temp"), std::string::npos) << list;
  EXPECT_NE(list.find("user=default"), std::string::npos) << list;
  ASSERT_EQ(admin.Command("ACL", "DELUSER", "temp"), ":1\r\n");
  ASSERT_TRUE(a.Send(RawConnection::Encode({"GET", "k"})));
  EXPECT_TRUE(a.WaitClosed());
  ASSERT_TRUE(b.Send(RawConnection::Encode({"PING"})));
  EXPECT_TRUE(b.WaitClosed());
  EXPECT_EQ(admin.Command("PING"), "+PONG\r\n");
}

// Redis 7.0 checks the queue again at EXEC: rules changed since MULTI refuse the command
// (the others run).
TEST(AclWire, ExecChecksRulesChangedAfterQueuing) {
  EmbeddedServer server;
  RawConnection admin(server.port()), c(server.port());
  ASSERT_EQ(admin.Command("ACL", "SETUSER", "w", "on", "nopass", "~*", "+@all"), "+OK\r\n");
  ASSERT_EQ(c.Command("AUTH", "w", "x"), "+OK\r\n");
  ASSERT_EQ(c.Command("MULTI"), "+OK\r\n");
  ASSERT_EQ(c.Command("SET", "k", "v"), "+QUEUED\r\n");
  ASSERT_EQ(c.Command("GET", "k"), "+QUEUED\r\n");
  ASSERT_EQ(admin.Command("ACL", "SETUSER", "w", "-set"), "+OK\r\n");
  EXPECT_EQ(c.Command("EXEC"),
            "*2\r\n-NOPERM ACLs rules changed between the moment the transaction was "
            "accumulated and the EXEC call. This command is no longer allowed for the following "
            "reason: no permission to execute the command or subcommand\r\n$-1\r\n");
}

// The `user` directive, requirepass beside it, and the counters of refused AUTHs.
TEST(AclWire, UserDirectivesAndAuthFailures) {
  Options o = EmbeddedServer::DefaultOptions();
  o.requirepass = "adminpw";
  o.acl_users = {"svc on >svcpw ~svc:* +@all -@dangerous"};
  EmbeddedServer server(o);
  RawConnection c(server.port());
  EXPECT_EQ(c.Command("GET", "svc:1"), "-NOAUTH Authentication required.\r\n");
  EXPECT_EQ(c.Command("AUTH", "svc", "bad"),
            "-WRONGPASS invalid username-password pair or user is disabled.\r\n");
  EXPECT_EQ(c.Command("AUTH", "bad"),
            "-WRONGPASS invalid username-password pair or user is disabled.\r\n");
  ASSERT_EQ(c.Command("HELLO", "3", "AUTH", "svc", "svcpw").substr(0, 1), "%");
  EXPECT_EQ(c.Command("ACL", "WHOAMI"), "$3\r\nsvc\r\n");
  EXPECT_EQ(c.Command("GET", "svc:1"), "_\r\n");
  EXPECT_EQ(c.Command("KEYS", "*"),
            "-NOPERM this user has no permissions to run the 'keys' command\r\n");
  RawConnection admin(server.port());
  ASSERT_EQ(admin.Command("AUTH", "adminpw"), "+OK\r\n");
  EXPECT_EQ(InfoField(admin, "acl_access_denied_auth"), 2);
  const std::string log = admin.Command("ACL", "LOG", "1");
  EXPECT_NE(log.find("$7\r\ncommand\r\n"), std::string::npos) << log;
  EXPECT_NE(log.find("$4\r\nkeys\r\n"), std::string::npos) << log;
  EXPECT_EQ(admin.Command("ACL", "LOG", "RESET"), "+OK\r\n");
  EXPECT_EQ(admin.Command("ACL", "LOG"), "*0\r\n");
  EXPECT_EQ(admin.Command("CONFIG", "RESETSTAT"), "+OK\r\n");
  EXPECT_EQ(InfoField(admin, "acl_access_denied_auth"), 0);
}

TEST(AclWire, AclFileSaveAndLoad) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("latch-acl-" + std::to_string(::getpid()) + ".acl");
  {
    std::ofstream f(path);
    f << "# comment\nuser ops on >opspw ~* +@all\n";
  }
  Options o = EmbeddedServer::DefaultOptions();
  o.aclfile = path.string();
  EmbeddedServer server(o);
  RawConnection c(server.port());
  EXPECT_EQ(c.Command("ACL", "USERS"), "*2\r\n$7\r\ndefault\r\n$3\r\nops\r\n");
  ASSERT_EQ(c.Command("ACL", "SETUSER", "ro", "on", ">ro", "~*", "-@all", "+get"), "+OK\r\n");
  ASSERT_EQ(c.Command("ACL", "SAVE"), "+OK\r\n");
  ASSERT_EQ(c.Command("ACL", "DELUSER", "ro", "ops"), ":2\r\n");
  ASSERT_EQ(c.Command("ACL", "LOAD"), "+OK\r\n");
  EXPECT_EQ(c.Command("ACL", "USERS"), "*3\r\n$7\r\ndefault\r\n$3\r\nops\r\n$2\r\nro\r\n");
  RawConnection ro(server.port());
  ASSERT_EQ(ro.Command("AUTH", "ro", "ro"), "+OK\r\n");
  EXPECT_EQ(ro.Command("SET", "k", "v"),
            "-NOPERM this user has no permissions to run the 'set' command\r\n");
  {
    std::ofstream f(path, std::ios::app);
    f << "user broken on +nosuchcommand\n";
  }
  const std::string err = c.Command("ACL", "LOAD");
  EXPECT_NE(err.find(":4: Error in user declaration 'broken': Unknown command or category name "
                     "in ACL"),
            std::string::npos)
      << err;
  EXPECT_EQ(c.Command("ACL", "USERS"), "*3\r\n$7\r\ndefault\r\n$3\r\nops\r\n$2\r\nro\r\n")
      << "a broken file changes nothing";
  std::filesystem::remove(path);
}

// A broken `user` line stops the server from starting (as Redis), rather than running
// with fewer restrictions than configured.
TEST(AclWire, BrokenUserDirectiveFailsStart) {
  Options o = EmbeddedServer::DefaultOptions();
  o.acl_users = {"svc on >pw +nosuchcommand"};
  EXPECT_ANY_THROW(EmbeddedServer server(o));
}

}  // namespace
}  // namespace latch::test
