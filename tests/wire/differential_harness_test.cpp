// Tests of the differential harness itself: corpus parsing, reply framing and the raw
// connection. A harness that framed replies wrongly would compare the wrong bytes and could
// hide a server bug, so its pieces are checked on their own (the connection against a real
// redis-server).
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "differential_corpus.h"
#include "support/raw_connection.h"
#include "support/resp_frame.h"
#include "support/server_process.h"

namespace latch::test {
namespace {

RespFrame::Status StatusOf(std::string_view bytes) { return FrameReply(bytes).status; }

TEST(RespFrameTest, FramesEveryReplyType) {
  const std::vector<std::string> replies = {"+OK\r\n",
                                            "-ERR x\r\n",
                                            ":-12\r\n",
                                            "$3\r\na\r\n\r\n",
                                            "$0\r\n\r\n",
                                            "$-1\r\n",
                                            "*-1\r\n",
                                            "*0\r\n",
                                            "_\r\n",
                                            ",1.5\r\n",
                                            "#t\r\n",
                                            "(123\r\n",
                                            "=7\r\ntxt:abc\r\n",
                                            "!3\r\nerr\r\n",
                                            "*2\r\n$1\r\na\r\n*1\r\n:1\r\n",
                                            "%1\r\n+k\r\n~2\r\n:1\r\n:2\r\n",
                                            ">2\r\n+message\r\n$1\r\nx\r\n"};
  for (const std::string& reply : replies) {
    RespFrame frame = FrameReply(reply + "+NEXT\r\n");
    ASSERT_EQ(frame.status, RespFrame::Status::kComplete) << Printable(reply);
    EXPECT_EQ(frame.length, reply.size()) << Printable(reply);
    // Every proper prefix is incomplete, never complete or malformed.
    for (std::size_t cut = 0; cut < reply.size(); ++cut) {
      EXPECT_EQ(StatusOf(reply.substr(0, cut)), RespFrame::Status::kIncomplete)
          << Printable(reply) << " cut at " << cut;
    }
  }
}

TEST(RespFrameTest, RejectsMalformedReplies) {
  EXPECT_EQ(StatusOf("?x\r\n"), RespFrame::Status::kMalformed);
  EXPECT_EQ(StatusOf("$abc\r\n"), RespFrame::Status::kMalformed);
  EXPECT_EQ(StatusOf("$-2\r\n"), RespFrame::Status::kMalformed);
  EXPECT_EQ(StatusOf("*x\r\n"), RespFrame::Status::kMalformed);
  EXPECT_EQ(StatusOf("$1\r\nab\r\n"), RespFrame::Status::kMalformed);
  std::string deep;
  for (int i = 0; i < 100; ++i) deep += "*1\r\n";
  EXPECT_EQ(StatusOf(deep + ":1\r\n"), RespFrame::Status::kMalformed);
}

TEST(DifferentialCorpus, ParsesEveryLineKind) {
  Corpus corpus;
  std::string error;
  ASSERT_TRUE(
      ParseCorpus("# c\n\nSET k \"a b\\r\\n\" 'x y'\n~TIME\n^KEYS *\n"
                  ">2 PING\\r\\nPING\\r\\n\n!advance 5\n!reconnect\n> \\{3}a\\x41\n",
                  &corpus, &error))
      << error;
  ASSERT_EQ(corpus.steps.size(), 7u);
  EXPECT_EQ(corpus.steps[0].args, (std::vector<std::string>{"SET", "k", "a b\r\n", "x y"}));
  EXPECT_EQ(corpus.steps[1].compare, CorpusStep::Compare::kType);
  EXPECT_EQ(corpus.steps[2].compare, CorpusStep::Compare::kSorted);
  EXPECT_EQ(corpus.steps[3].raw, "PING\r\nPING\r\n");
  EXPECT_EQ(corpus.steps[3].replies, 2);
  EXPECT_EQ(corpus.steps[4].advance_ms, 5);
  EXPECT_EQ(corpus.steps[5].kind, CorpusStep::Kind::kReconnect);
  EXPECT_EQ(corpus.steps[6].raw, "aaaA");
  EXPECT_FALSE(ParseCorpus("SET \"a\n", &corpus, &error));
  EXPECT_FALSE(ParseCorpus("SET \"a\"b\n", &corpus, &error));
  EXPECT_FALSE(ParseCorpus("!bogus\n", &corpus, &error));
  EXPECT_FALSE(ParseCorpus("PING\n!server requirepass x\n", &corpus, &error));
  EXPECT_FALSE(ParseCorpus("> \\q\n", &corpus, &error));
}

TEST(DifferentialCorpus, SortsFlatAggregatesOnly) {
  EXPECT_EQ(SortAggregates("*2\r\n$1\r\nb\r\n$1\r\na\r\n"), "*2\r\n$1\r\na\r\n$1\r\nb\r\n");
  EXPECT_EQ(SortAggregates("*2\r\n$1\r\n0\r\n*2\r\n$1\r\nz\r\n$1\r\ny\r\n"),
            "*2\r\n$1\r\n0\r\n*2\r\n$1\r\ny\r\n$1\r\nz\r\n");
  EXPECT_EQ(SortAggregates("+OK\r\n"), "+OK\r\n");
}

TEST(RawConnectionTest, ReadsPipelinedRepliesAndSeesTheClose) {
  RedisServerProcess redis;
  ASSERT_TRUE(redis.ok()) << redis.error();
  RawConnection conn(redis.port());
  ASSERT_TRUE(conn.connected()) << conn.error();
  ASSERT_TRUE(conn.Send("PING\r\n*2\r\n$4\r\nECHO\r\n$4\r\na\r\nb\r\nHELLO 3\r\n"));
  EXPECT_EQ(conn.ReadReply().value_or("?"), "+PONG\r\n");
  EXPECT_EQ(conn.ReadReply().value_or("?"), "$4\r\na\r\nb\r\n");
  std::string hello = conn.ReadReply().value_or("?");
  EXPECT_EQ(hello.substr(0, 4), "%7\r\n") << Printable(hello);
  EXPECT_EQ(conn.Command("SET", "k", "v"), "+OK\r\n");
  EXPECT_EQ(conn.Command("GET", "missing"), "_\r\n");
  EXPECT_EQ(conn.Command("QUIT"), "+OK\r\n");
  EXPECT_TRUE(conn.WaitClosed());
}

TEST(RawConnectionTest, EveryWaitIsBounded) {
  RedisServerProcess redis;
  ASSERT_TRUE(redis.ok()) << redis.error();
  RawConnection conn(redis.port(), std::chrono::milliseconds(200));
  ASSERT_TRUE(conn.connected()) << conn.error();
  // Half a request: the server waits for the rest and never replies.
  ASSERT_TRUE(conn.Send("*2\r\n$4\r\nECHO\r\n"));
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(conn.ReadReply().has_value());
  EXPECT_NE(conn.error().find("timed out"), std::string::npos) << conn.error();
  EXPECT_FALSE(conn.WaitClosed());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
  // A failed call says so in the reply text, which then shows up in EXPECT_EQ messages.
  RawConnection unconnected;
  EXPECT_EQ(unconnected.Command("PING"), "<no reply: not connected>");
}

TEST(ServerProcessTest, StopsTheServerAndFreesThePort) {
  int port = 0;
  {
    RedisServerProcess redis({"--requirepass", "pw"});
    ASSERT_TRUE(redis.ok()) << redis.error();
    port = redis.port();
    RawConnection conn(port);
    EXPECT_EQ(conn.Command("GET", "k"), "-NOAUTH Authentication required.\r\n");
    EXPECT_NE(redis.Stop(), -1);
  }
  RawConnection conn(port, std::chrono::milliseconds(500));
  EXPECT_FALSE(conn.connected());
}

}  // namespace
}  // namespace latch::test
