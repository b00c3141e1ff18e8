// Pub/sub over real sockets: subscribers and publishers on different connections (the
// embedded server's two workers take connections in turn, so neighbours run on different
// threads), RESP2 and RESP3, compared byte for byte with a real redis-server where the
// exchange is deterministic, and a slow subscriber cut off by the pubsub output limit while
// a fast one keeps receiving.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "support/embedded_server.h"
#include "support/raw_connection.h"
#include "support/server_process.h"

namespace latch::test {
namespace {

// One scripted exchange between a subscriber `s` and a publisher `p`, returning every raw
// reply in order, so that the same script can run against latchd and redis-server.
std::vector<std::string> CrossClientExchange(int port) {
  RawConnection s(port), p(port), q(port);
  std::vector<std::string> r;
  auto add = [&](std::string reply) { r.push_back(std::move(reply)); };
  auto read = [&] { add(s.ReadReply().value_or("<none>")); };
  add(s.Command("SUBSCRIBE", "lock:a"));
  add(s.Command("PSUBSCRIBE", "lock:*"));
  add(p.Command("PUBLISH", "lock:a", "released"));  // 2: the channel and the pattern
  read();
  read();
  add(p.Command("PUBLISH", "other", "x"));  // nobody
  add(p.Command("PUBSUB", "NUMSUB", "lock:a", "other"));
  add(p.Command("PUBSUB", "NUMPAT"));
  add(p.Command("PUBSUB", "CHANNELS"));
  add(p.Command("PUBSUB", "CHANNELS", "lock:?"));
  add(p.Command("PUBSUB", "CHANNELS", "x*"));
  add(s.Command("GET", "k"));       // refused in RESP2 subscriber mode
  add(s.Command("CLIENT", "LIST"));  // refused, named by its full name
  add(s.Command("PING"));
  add(s.Command("PING", "hi"));
  // A script publishes too (Redisson's and simple-redis-mutex's release scripts do).
  add(p.Command("EVAL", "return redis.call('PUBLISH', KEYS[1], ARGV[1])", "1", "lock:a", "bye"));
  read();
  read();
  add(s.Command("UNSUBSCRIBE", "lock:a"));
  add(s.Command("PUNSUBSCRIBE"));
  add(s.Command("UNSUBSCRIBE"));  // none left: one reply with a null channel
  add(s.Command("GET", "k"));     // out of subscriber mode
  add(p.Command("PUBLISH", "lock:a", "late"));
  // RESP3: pushes, and any command allowed while subscribed.
  add(q.Command("HELLO", "3").substr(0, 1));
  add(q.Command("SUBSCRIBE", "c3"));
  add(q.Command("GET", "k"));
  add(p.Command("PUBLISH", "c3", "pushed"));
  add(q.ReadReply().value_or("<none>"));
  add(q.Command("PUBLISH", "c3", "to-self"));  // the push comes before the reply
  add(q.ReadReply().value_or("<none>"));
  add(q.Command("PING"));
  add(q.Command("RESET"));  // leaves subscriber mode without confirmations
  add(p.Command("PUBLISH", "c3", "gone"));
  add(p.Command("PUBSUB", "NUMSUB", "c3"));
  return r;
}

TEST(PubsubWire, CrossClientExchangeMatchesRedis) {
  RedisServerProcess redis;
  ASSERT_TRUE(redis.ok()) << redis.error();
  EmbeddedServer latchd;
  const std::vector<std::string> want = CrossClientExchange(redis.port());
  const std::vector<std::string> got = CrossClientExchange(latchd.port());
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i], want[i]) << "step " << i;
  }
}

TEST(PubsubWire, ClientListAndInfoShowSubscriptions) {
  EmbeddedServer server;
  RawConnection s(server.port()), p(server.port());
  ASSERT_EQ(s.Command("CLIENT", "SETNAME", "sub").substr(0, 3), "+OK");
  s.Command("SUBSCRIBE", "a", "b");
  ASSERT_TRUE(s.ReadReply().has_value());  // the second confirmation
  s.Command("PSUBSCRIBE", "x*");
  const std::string list = p.Command("CLIENT", "LIST");
  EXPECT_NE(list.find("name=sub age=0 idle=0 flags=P db=0 sub=2 psub=1 ssub=0"),
            std::string::npos)
      << list;
  const std::string info = p.Command("INFO", "stats");
  EXPECT_NE(info.find("pubsub_channels:2\r\npubsub_patterns:1\r\n"), std::string::npos) << info;
}

// The names in a CLIENT LIST reply, sorted (ids, ports and ages differ between servers).
std::vector<std::string> ListedNames(const std::string& list) {
  std::vector<std::string> names;
  for (std::size_t at = list.find(" name="); at != std::string::npos;
       at = list.find(" name=", at + 1)) {
    const std::size_t begin = at + 6;
    names.push_back(list.substr(begin, list.find(' ', begin) - begin));
  }
  std::sort(names.begin(), names.end());
  return names;
}

// CLIENT LIST TYPE and CLIENT KILL TYPE by Redis's client types: pubsub while a client has
// a channel or pattern subscription, RESP2 or RESP3, normal otherwise (MONITOR too).
std::vector<std::string> ClientTypeExchange(int port) {
  RawConnection a(port), b(port), c(port), m(port);
  std::vector<std::string> r;
  auto join = [](const std::vector<std::string>& names) {
    std::string s;
    for (const std::string& n : names) s += n + ",";
    return s;
  };
  auto list = [&](const char* type) {
    r.push_back(std::string(type) + ": " +
                join(ListedNames(c.Command("CLIENT", "LIST", "TYPE", type))));
  };
  for (auto [conn, name] : {std::pair{&a, "a"}, {&b, "b"}, {&c, "c"}, {&m, "m"}}) {
    r.push_back(conn->Command("CLIENT", "SETNAME", name));
  }
  r.push_back(a.Command("SUBSCRIBE", "ch"));
  r.push_back(b.Command("HELLO", "3").substr(0, 1));
  r.push_back(b.Command("SUBSCRIBE", "ch3"));
  r.push_back(m.Command("MONITOR"));
  list("pubsub");
  list("normal");
  list("master");
  r.push_back(b.Command("UNSUBSCRIBE"));
  list("pubsub");
  r.push_back(b.Command("PSUBSCRIBE", "x*"));
  list("pubsub");
  r.push_back(c.Command("CLIENT", "KILL", "TYPE", "pubsub"));
  r.push_back(c.Command("CLIENT", "KILL", "TYPE", "replica"));
  r.push_back(a.WaitClosed() ? "a closed" : "a open");
  r.push_back(b.WaitClosed() ? "b closed" : "b open");
  list("normal");
  return r;
}

TEST(PubsubWire, ClientTypesMatchRedis) {
  RedisServerProcess redis;
  ASSERT_TRUE(redis.ok()) << redis.error();
  EmbeddedServer latchd;
  const std::vector<std::string> want = ClientTypeExchange(redis.port());
  const std::vector<std::string> got = ClientTypeExchange(latchd.port());
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i], want[i]) << "step " << i;
}

// Many messages from publishers on both workers reach both subscribers complete and, per
// publisher, in order.
TEST(PubsubWire, MessagesFromTwoThreadsArriveInOrder) {
  EmbeddedServer server;
  RawConnection s1(server.port()), s2(server.port()), p1(server.port()), p2(server.port());
  ASSERT_EQ(s1.Command("SUBSCRIBE", "c"), "*3\r\n$9\r\nsubscribe\r\n$1\r\nc\r\n:1\r\n");
  ASSERT_EQ(s2.Command("SUBSCRIBE", "c"), "*3\r\n$9\r\nsubscribe\r\n$1\r\nc\r\n:1\r\n");
  constexpr int kEach = 500;
  std::string batch1, batch2;
  for (int i = 0; i < kEach; ++i) {
    batch1 += RawConnection::Encode({"PUBLISH", "c", "a" + std::to_string(i)});
    batch2 += RawConnection::Encode({"PUBLISH", "c", "b" + std::to_string(i)});
  }
  ASSERT_TRUE(p1.Send(batch1));
  ASSERT_TRUE(p2.Send(batch2));
  for (int i = 0; i < kEach; ++i) {
    ASSERT_EQ(p1.ReadReply(), ":2\r\n");
    ASSERT_EQ(p2.ReadReply(), ":2\r\n");
  }
  for (RawConnection* s : {&s1, &s2}) {
    int next_a = 0, next_b = 0;
    for (int i = 0; i < 2 * kEach; ++i) {
      const auto m = s->ReadReply();
      ASSERT_TRUE(m.has_value()) << "message " << i;
      const std::size_t at = m->rfind("\r\n", m->size() - 3);
      const std::string body = m->substr(at + 2, m->size() - at - 4);
      if (body[0] == 'a') {
        ASSERT_EQ(body, "a" + std::to_string(next_a++));
      } else {
        ASSERT_EQ(body, "b" + std::to_string(next_b++));
      }
    }
  }
}

// A subscriber that never reads is closed at the pubsub hard limit; one that reads keeps
// every message.
TEST(PubsubWire, SlowSubscriberCutOffFastOneKeepsReceiving) {
  Options o = EmbeddedServer::DefaultOptions();
  o.client_output_buffer_limit[2] = {1 << 20, 0, 0};  // pubsub: 1 MB hard
  EmbeddedServer server(o);
  RawConnection slow(server.port()), fast(server.port()), p(server.port());
  ASSERT_EQ(slow.Command("SUBSCRIBE", "c").substr(0, 4), "*3\r\n");
  ASSERT_EQ(fast.Command("SUBSCRIBE", "c").substr(0, 4), "*3\r\n");
  const std::string payload(16 * 1024, 'x');
  const std::string msg = RawConnection::Encode({"PUBLISH", "c", payload});
  // 32 MB in all: far past the limit plus any socket buffering of the slow client.
  constexpr int kMessages = 2048;
  int slow_gone_at = -1;
  for (int i = 0; i < kMessages; ++i) {
    ASSERT_TRUE(p.Send(msg));
    const auto n = p.ReadReply();
    ASSERT_TRUE(n.has_value());
    if (*n == ":1\r\n" && slow_gone_at < 0) slow_gone_at = i;
    const auto m = fast.ReadReply();
    ASSERT_TRUE(m.has_value()) << "fast subscriber lost message " << i;
    ASSERT_EQ(m->size(), 34 + payload.size());
  }
  EXPECT_GT(slow_gone_at, 0) << "the slow subscriber was never closed";
  EXPECT_TRUE(slow.WaitClosed());
  EXPECT_EQ(p.Command("PUBSUB", "NUMSUB", "c"), "*2\r\n$1\r\nc\r\n:1\r\n");
}

TEST(PubsubWire, SubscribeInsideMulti) {
  EmbeddedServer server;
  RawConnection s(server.port()), p(server.port());
  ASSERT_EQ(s.Command("MULTI"), "+OK\r\n");
  ASSERT_EQ(s.Command("SUBSCRIBE", "m"), "+QUEUED\r\n");
  EXPECT_EQ(s.Command("EXEC"), "*1\r\n*3\r\n$9\r\nsubscribe\r\n$1\r\nm\r\n:1\r\n");
  EXPECT_EQ(p.Command("PUBLISH", "m", "v"), ":1\r\n");
  EXPECT_EQ(s.ReadReply(), "*3\r\n$7\r\nmessage\r\n$1\r\nm\r\n$1\r\nv\r\n");
}

}  // namespace
}  // namespace latch::test
