// REST requests run as ACL users, checked at every request as AUTH checks them (issue 24,
// item 8): `Bearer <password>` is the default user's AUTH <password>, `Basic user:password`
// and `Bearer user:password` a named user's AUTH, and rest-token the rest-user's (default:
// default). A changed password, a user turned off and a narrowed user apply to the next
// request; a refused command is Redis's NOPERM text in REST's error JSON.
#include <gtest/gtest.h>

#include <string>

#include "support/raw_connection.h"
#include "wire/rest_fixture.h"

namespace latch::test {
namespace {

const std::string kUnauthorized = R"({"error":"WRONGPASS invalid or missing auth token"})";

std::string Bearer(const std::string& token) { return "Authorization: Bearer " + token; }

std::string Basic(const std::string& user_pass) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  const auto at = [&](std::size_t k) { return static_cast<unsigned char>(user_pass[k]); };
  for (; i + 3 <= user_pass.size(); i += 3) {
    const unsigned v = (at(i) << 16) | (at(i + 1) << 8) | at(i + 2);
    for (int s : {18, 12, 6, 0}) out.push_back(kAlphabet[(v >> s) & 63]);
  }
  if (const std::size_t rest = user_pass.size() - i; rest > 0) {
    const unsigned v = (at(i) << 16) | (rest == 2 ? at(i + 1) << 8 : 0);
    out.push_back(kAlphabet[(v >> 18) & 63]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.push_back(rest == 2 ? kAlphabet[(v >> 6) & 63] : '=');
    out.push_back('=');
  }
  return "Authorization: Basic " + out;
}

Options WithPassword(const std::string& requirepass, const std::string& rest_token = "") {
  Options o = RestOptions(EmbeddedServer::DefaultOptions(), rest_token);
  o.requirepass = requirepass;
  return o;
}

TEST(RestAcl, ChangedPasswordIsRefusedAtTheNextRequest) {
  RestServer s(WithPassword("old"));
  HttpConnection c(s.port());  // one keep-alive connection: nothing is cached on it either
  EXPECT_EQ(c.Request("GET", "/ping", "", {Bearer("old")}).body, R"({"result":"PONG"})");
  RawConnection admin(s.resp_port());
  ASSERT_EQ(admin.Command("AUTH", "old"), "+OK\r\n");
  ASSERT_EQ(admin.Command("ACL", "SETUSER", "default", "resetpass", ">new"), "+OK\r\n");
  HttpResponse r = c.Request("GET", "/ping", "", {Bearer("old")});
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(r.body, kUnauthorized);
  // The old password cannot open the RESP port through REST any more.
  r = c.Request("POST", "/", R"(["ACL","SETUSER","default","on","nopass"])", {Bearer("old")});
  EXPECT_EQ(r.status, 401);
  RawConnection anyone(s.resp_port());
  EXPECT_EQ(anyone.Command("PING"), "-NOAUTH Authentication required.\r\n");
  EXPECT_EQ(c.Request("GET", "/ping", "", {Bearer("new")}).body, R"({"result":"PONG"})");
  // CONFIG SET requirepass is the default user's password too.
  ASSERT_EQ(admin.Command("CONFIG", "SET", "requirepass", "third"), "+OK\r\n");
  EXPECT_EQ(c.Request("GET", "/ping", "", {Bearer("new")}).status, 401);
  EXPECT_EQ(c.Request("GET", "/ping", "", {Bearer("third")}).status, 200);
  // Failed attempts are counted and logged, as AUTH failures.
  EXPECT_EQ(InfoField(admin, "stats", "acl_access_denied_auth"), "3");
}

TEST(RestAcl, DefaultUserOffRefusesItsPasswordAndRestToken) {
  RestServer s(WithPassword("pw", "tok"));
  EXPECT_EQ(s.Get("/ping", {Bearer("pw")}).status, 200);
  EXPECT_EQ(s.Get("/ping", {Bearer("tok")}).status, 200);
  RawConnection admin(s.resp_port());
  ASSERT_EQ(admin.Command("AUTH", "pw"), "+OK\r\n");
  ASSERT_EQ(admin.Command("ACL", "SETUSER", "default", "off"), "+OK\r\n");
  EXPECT_EQ(s.Get("/ping", {Bearer("pw")}).body, kUnauthorized);
  EXPECT_EQ(s.Get("/ping", {Bearer("tok")}).body, kUnauthorized) << "rest-token runs as default";
  EXPECT_EQ(s.Get("/ping?_token=tok", {}).status, 401);
  ASSERT_EQ(admin.Command("ACL", "SETUSER", "default", "on"), "+OK\r\n");
  EXPECT_EQ(s.Get("/ping", {Bearer("tok")}).body, R"({"result":"PONG"})");
}

TEST(RestAcl, RestrictedUserGetsNopermInRestsErrorJson) {
  RestServer s(WithPassword("pw"));
  RawConnection admin(s.resp_port());
  ASSERT_EQ(admin.Command("AUTH", "pw"), "+OK\r\n");
  ASSERT_EQ(admin.Command("ACL", "SETUSER", "alice", "on", ">apw", "~app:*", "+get", "+set",
                          "+acl|whoami"),
            "+OK\r\n");
  for (const std::string& auth : {Basic("alice:apw"), Bearer("alice:apw")}) {
    EXPECT_EQ(s.Post("/", R"(["SET","app:1","v"])", {auth}).body, R"({"result":"OK"})") << auth;
    EXPECT_EQ(s.Get("/get/app:1", {auth}).body, R"({"result":"v"})") << auth;
    EXPECT_EQ(s.Post("/", R"(["ACL","WHOAMI"])", {auth}).body, R"({"result":"alice"})") << auth;
    HttpResponse key = s.Post("/", R"(["SET","other","v"])", {auth});
    EXPECT_EQ(key.status, 400);
    EXPECT_EQ(key.body,
              R"({"error":"NOPERM this user has no permissions to access one of the keys )"
              R"(used as arguments"})");
    HttpResponse cmd = s.Post("/", R"(["ACL","SETUSER","default","on","nopass"])", {auth});
    EXPECT_EQ(cmd.status, 400);
    EXPECT_EQ(
        cmd.body,
        R"({"error":"NOPERM this user has no permissions to run the 'acl|setuser' command"})");
    EXPECT_EQ(
        s.Post("/pipeline", R"([["GET","app:1"],["FLUSHALL"],["GET","secret"]])", {auth}).body,
        R"([{"result":"v"},)"
        R"({"error":"NOPERM this user has no permissions to run the 'flushall' command"},)"
        R"({"error":"NOPERM this user has no permissions to access one of the keys used )"
        R"(as arguments"}])");
    // A transaction needs MULTI and EXEC, as over RESP; refused, none of it runs.
    HttpResponse tx = s.Post("/multi-exec", R"([["SET","app:2","x"]])", {auth});
    EXPECT_EQ(tx.status, 400);
    EXPECT_EQ(tx.body,
              R"({"error":"NOPERM this user has no permissions to run the 'multi' command"})");
  }
  EXPECT_EQ(admin.Command("EXISTS", "other", "app:2"), ":0\r\n");
  ASSERT_EQ(admin.Command("ACL", "SETUSER", "alice", "+multi", "+exec"), "+OK\r\n");
  HttpResponse tx =
      s.Post("/multi-exec", R"([["SET","app:2","x"],["DEL","app:1"]])", {Basic("alice:apw")});
  EXPECT_EQ(tx.status, 400);
  EXPECT_EQ(tx.body, R"({"error":"EXECABORT Transaction discarded because of previous errors."})");
  EXPECT_EQ(
      s.Post("/multi-exec", R"([["SET","app:2","x"],["GET","app:2"]])", {Basic("alice:apw")}).body,
      R"([{"result":"OK"},{"result":"x"}])");
  EXPECT_EQ(admin.Command("DEL", "app:2"), ":1\r\n");
  EXPECT_EQ(admin.Command("GET", "app:1"), "$1\r\nv\r\n");
  // The refusals are in ACL LOG under alice's name.
  EXPECT_NE(admin.Command("ACL", "LOG", "1").find("alice"), std::string::npos);

  // Narrowed, turned off or given a new password: each applies to the next request.
  HttpConnection c(s.port());
  EXPECT_EQ(c.Request("GET", "/get/app:1", "", {Basic("alice:apw")}).status, 200);
  ASSERT_EQ(admin.Command("ACL", "SETUSER", "alice", "-get"), "+OK\r\n");
  EXPECT_EQ(c.Request("GET", "/get/app:1", "", {Basic("alice:apw")}).body,
            R"({"error":"NOPERM this user has no permissions to run the 'get' command"})");
  ASSERT_EQ(admin.Command("ACL", "SETUSER", "alice", "off"), "+OK\r\n");
  EXPECT_EQ(c.Request("GET", "/set/app:1/w", "", {Basic("alice:apw")}).body, kUnauthorized);
  ASSERT_EQ(admin.Command("ACL", "SETUSER", "alice", "on", "resetpass", ">apw2"), "+OK\r\n");
  EXPECT_EQ(c.Request("GET", "/set/app:1/w", "", {Basic("alice:apw")}).status, 401);
  EXPECT_EQ(c.Request("GET", "/set/app:1/w", "", {Bearer("alice:apw2")}).status, 200);
  // A wrong password or an unknown user is 401, never another user's rights.
  EXPECT_EQ(s.Get("/ping", {Basic("alice:pw")}).status, 401);
  EXPECT_EQ(s.Get("/ping", {Basic("nobody:pw")}).status, 401);
  EXPECT_EQ(s.Get("/ping", {Basic("default:pw")}).status, 200);
}

TEST(RestAcl, RestTokenRunsAsRestUser) {
  RestServer s(WithPassword("pw", "tok"));
  RawConnection admin(s.resp_port());
  ASSERT_EQ(admin.Command("AUTH", "pw"), "+OK\r\n");
  EXPECT_EQ(s.Post("/", R"(["ACL","WHOAMI"])").body, R"({"result":"default"})");
  ASSERT_EQ(
      admin.Command("ACL", "SETUSER", "svc", "on", "nopass", "~svc:*", "+@read", "+acl|whoami"),
      "+OK\r\n");
  ASSERT_EQ(admin.Command("CONFIG", "SET", "rest-user", "svc"), "+OK\r\n");
  EXPECT_EQ(admin.Command("CONFIG", "GET", "rest-user"), "*2\r\n$9\r\nrest-user\r\n$3\r\nsvc\r\n");
  EXPECT_EQ(s.Post("/", R"(["ACL","WHOAMI"])").body, R"({"result":"svc"})");
  EXPECT_EQ(s.Get("/get/svc:x").body, R"({"result":null})");
  EXPECT_EQ(s.Get("/set/svc:x/1").body,
            R"({"error":"NOPERM this user has no permissions to run the 'set' command"})");
  // svc has nopass, but with a rest-token set nopass opens nothing over REST: only the token.
  EXPECT_EQ(s.Get("/get/svc:x", {Basic("svc:anything")}).status, 401);
  ASSERT_EQ(admin.Command("ACL", "DELUSER", "svc"), ":1\r\n");
  EXPECT_EQ(s.Get("/get/svc:x").status, 401) << "rest-user gone";
  // The password still works beside the token.
  EXPECT_EQ(s.Post("/", R"(["ACL","WHOAMI"])", {Bearer("pw")}).body, R"({"result":"default"})");
}

// The request's user deleted while its pipeline runs: the connection is closed without an
// answer, as Redis closes a RESP client whose user is deleted; nothing after it runs.
TEST(RestAcl, UserDeletedDuringItsRequestClosesTheConnection) {
  RestServer s(WithPassword("pw"));
  RawConnection admin(s.resp_port());
  ASSERT_EQ(admin.Command("AUTH", "pw"), "+OK\r\n");
  ASSERT_EQ(admin.Command("ACL", "SETUSER", "ops", "on", ">opw", "+@all", "~*"), "+OK\r\n");
  HttpConnection c(s.port());
  ASSERT_TRUE(c.Send(HttpRequestBytes("POST", "/pipeline",
                                      R"([["ACL","DELUSER","ops"],["SET","after","1"]])",
                                      {Basic("ops:opw")})));
  std::optional<HttpResponse> r = c.Read();
  EXPECT_FALSE(r) << r->body;
  EXPECT_TRUE(c.WaitClosed());
  EXPECT_EQ(admin.Command("EXISTS", "after"), ":0\r\n");
  EXPECT_EQ(s.Get("/ping", {Basic("ops:opw")}).status, 401);
}

TEST(RestAcl, OpenOnlyWhenDefaultHasNopassAndNoRestToken) {
  RestServer open(RestOptions(EmbeddedServer::DefaultOptions(), ""));
  EXPECT_EQ(open.Get("/ping", {}).status, 200);
  EXPECT_EQ(open.Get("/ping", {Bearer("anything")}).status, 200);
  RawConnection admin(open.resp_port());
  ASSERT_EQ(admin.Command("ACL", "SETUSER", "default", "off"), "+OK\r\n");
  EXPECT_EQ(open.Get("/ping", {}).status, 401) << "default off: nobody is let in unnamed";
  ASSERT_EQ(admin.Command("ACL", "SETUSER", "default", "on"), "+OK\r\n");
  EXPECT_EQ(open.Get("/ping", {}).status, 200);

  RestServer token;  // rest-token "tok", default nopass: REST needs the token
  EXPECT_EQ(token.Get("/ping", {}).status, 401);
  EXPECT_EQ(token.Get("/ping", {Bearer("anything")}).status, 401);
  EXPECT_EQ(token.Get("/ping", {Basic("default:anything")}).status, 401);
  EXPECT_EQ(token.Get("/ping").status, 200);
}

}  // namespace
}  // namespace latch::test
