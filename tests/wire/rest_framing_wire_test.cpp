// How the REST endpoint frames request bodies (RFC 9112 section 6): chunked is the only
// transfer coding it accepts, and only as the last and single one; anything that leaves the
// body's length in doubt (an unknown coding, Transfer-Encoding beside Content-Length, or in
// an HTTP/1.0 request) is answered 400 (501 for an unknown coding before chunked) and the
// connection closed, so that no byte of that body can be read as a request of its own
// (request smuggling). Nothing such a request carries runs.
#include <gtest/gtest.h>

#include <string>

#include "wire/rest_fixture.h"

namespace latch::test {
namespace {

// Sends raw request bytes on a fresh connection; returns the response and whether the
// server closed the connection after it.
struct Answer {
  int status = 0;
  std::string body;
  std::string connection;
  bool closed = false;
};

Answer Exchange(RestServer& s, const std::string& bytes) {
  HttpConnection c(s.port());
  Answer a;
  if (!c.Send(bytes)) return a;
  std::optional<HttpResponse> r = c.Read();
  if (!r) return a;
  a.status = r->status;
  a.body = r->body;
  a.connection = r->header("connection");
  a.closed = c.WaitClosed();
  return a;
}

std::string Head(const std::string& version, const std::string& fields) {
  return "POST / " + version + "\r\nHost: t\r\n" + kRestAuth + "\r\n" + fields + "\r\n";
}

const std::string kSet = R"(["SET","smuggled","1"])";

std::string Chunked(const std::string& body) {
  char size[16];
  std::snprintf(size, sizeof size, "%zx", body.size());
  return std::string(size) + "\r\n" + body + "\r\n0\r\n\r\n";
}

TEST(RestFraming, UnknownCodingWithContentLengthIs400AndClosed) {
  RestServer s;
  const std::string length = "Content-Length: " + std::to_string(kSet.size()) + "\r\n";
  for (std::string te : {"gzip", "identity", "chunked, gzip", "x-custom"}) {
    Answer a = Exchange(s, Head("HTTP/1.1", "Transfer-Encoding: " + te + "\r\n" + length) + kSet);
    EXPECT_EQ(a.status, 400) << te << ": " << a.body;
    EXPECT_EQ(a.connection, "close") << te;
    EXPECT_TRUE(a.closed) << te;
  }
  // Content-Length first, then the coding: the same.
  Answer a = Exchange(s, Head("HTTP/1.1", length + "Transfer-Encoding: gzip\r\n") + kSet);
  EXPECT_EQ(a.status, 400) << a.body;
  EXPECT_TRUE(a.closed);
  EXPECT_EQ(s.Get("/get/smuggled").body, R"({"result":null})") << "nothing ran";
}

TEST(RestFraming, UnknownCodingWithoutLengthIs400AndTheBodyIsNotARequest) {
  RestServer s;
  // Without the fix the empty-bodied POST is answered, then the "body" is read as the next
  // request: a smuggled GET /set/...
  const std::string smuggled =
      "GET /set/smuggled/1 HTTP/1.1\r\nHost: t\r\n" + kRestAuth + "\r\n\r\n";
  Answer a = Exchange(s, Head("HTTP/1.1", "Transfer-Encoding: gzip\r\n") + smuggled);
  EXPECT_EQ(a.status, 400) << a.body;
  EXPECT_NE(a.body.find("Transfer-Encoding"), std::string::npos) << a.body;
  EXPECT_TRUE(a.closed);
  EXPECT_EQ(s.Get("/get/smuggled").body, R"({"result":null})") << "nothing ran";
}

TEST(RestFraming, UnknownCodingBeforeChunkedIs501AndClosed) {
  RestServer s;
  Answer a = Exchange(s, Head("HTTP/1.1", "Transfer-Encoding: gzip, chunked\r\n") + Chunked(kSet));
  EXPECT_EQ(a.status, 501) << a.body;
  EXPECT_NE(a.body.find("gzip"), std::string::npos) << a.body;
  EXPECT_TRUE(a.closed);
  a = Exchange(s, Head("HTTP/1.1", "Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n") +
                      Chunked(kSet));
  EXPECT_EQ(a.status, 501) << a.body;
  EXPECT_TRUE(a.closed);
  EXPECT_EQ(s.Get("/get/smuggled").body, R"({"result":null})") << "nothing ran";
}

TEST(RestFraming, ChunkedWithContentLengthOrInHttp10Is400AndClosed) {
  RestServer s;
  const std::string length = "Content-Length: 5\r\n";
  for (const std::string& fields :
       {"Transfer-Encoding: chunked\r\n" + length, length + "Transfer-Encoding: chunked\r\n",
        std::string("Transfer-Encoding: chunked, chunked\r\n")}) {
    Answer a = Exchange(s, Head("HTTP/1.1", fields) + Chunked(kSet));
    EXPECT_EQ(a.status, 400) << fields << a.body;
    EXPECT_TRUE(a.closed) << fields;
  }
  Answer a = Exchange(s, Head("HTTP/1.0", "Transfer-Encoding: chunked\r\n") + Chunked(kSet));
  EXPECT_EQ(a.status, 400) << a.body;
  EXPECT_TRUE(a.closed);
  EXPECT_EQ(s.Get("/get/smuggled").body, R"({"result":null})") << "nothing ran";
}

TEST(RestFraming, ChunkedAloneIsServedOnAKeptConnection) {
  RestServer s;
  HttpConnection c(s.port());
  for (std::string te : {"chunked", "Chunked", "CHUNKED"}) {
    ASSERT_TRUE(
        c.Send(Head("HTTP/1.1", "Transfer-Encoding: " + te + "\r\n") + Chunked(R"(["INCR","n"])")));
    std::optional<HttpResponse> r = c.Read();
    ASSERT_TRUE(r) << c.error();
    EXPECT_EQ(r->status, 200) << te;
    EXPECT_EQ(r->header("connection"), "") << te;
  }
  EXPECT_EQ(c.Request("GET", "/get/n", "", {kRestAuth}).body, R"({"result":"3"})");
}

}  // namespace
}  // namespace latch::test
