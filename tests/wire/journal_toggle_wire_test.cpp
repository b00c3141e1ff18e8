// CONFIG SET appendonly yes/no while writers run, in databases created meanwhile (issue 24:
// the key-event router's journal slot was a plain pointer, read by writers of a database
// created after the switch took its shard locks). Every write is acknowledged, the server
// keeps answering, and under TSan (CI's sanitize.sh) no data race is reported. Bounded:
// fixed counts, and a deadline for the last rewrite.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "support/embedded_server.h"
#include "support/raw_connection.h"
#include "support/wire_expect.h"

namespace latch::test {
namespace {

using namespace std::chrono_literals;

TEST(JournalToggleWire, AppendonlySwitchesWhileWritersFillNewDatabases) {
  char tmpl[] = "/tmp/latch-toggle-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  {
    Options o = EmbeddedServer::DefaultOptions();
    o.dir = dir;
    o.databases = 64;
    EmbeddedServer server(o);
    constexpr int kWriters = 2, kWrites = 3000, kToggles = 20;
    std::atomic<int> acknowledged{0};
    std::atomic<bool> failed{false};
    std::vector<std::thread> writers;
    for (int w = 0; w < kWriters; ++w) {
      writers.emplace_back([&, w] {
        RawConnection c(server.port(), 20s);
        for (int i = 0; i < kWrites && !failed; ++i) {
          // Databases are created on first use: a new one every 100 writes or so.
          const std::string db = std::to_string((i / 100 + w * 32) % 64);
          const std::string out = RawConnection::Encode({"SELECT", db}) +
                                  RawConnection::Encode({"SET", "k" + std::to_string(i), "v"});
          if (!c.Send(out) || c.ReadReply() != "+OK\r\n" || c.ReadReply() != "+OK\r\n") {
            failed = true;
            return;
          }
          ++acknowledged;
        }
      });
    }
    RawConnection admin(server.port(), 20s);
    for (int t = 0; t < kToggles && !failed; ++t) {
      const char* value = t % 2 == 0 ? "yes" : "no";
      EXPECT_EQ(admin.Command("CONFIG", "SET", "appendonly", value), "+OK\r\n") << t;
    }
    for (std::thread& t : writers) t.join();
    EXPECT_FALSE(failed.load());
    EXPECT_EQ(acknowledged.load(), kWriters * kWrites);
    EXPECT_EQ(admin.Command("CONFIG", "SET", "appendonly", "yes"), "+OK\r\n");
    EXPECT_TRUE(Eventually(
        [&] { return InfoField(admin, "persistence", "aof_rewrite_in_progress") == "0"; }, 20s));
    EXPECT_EQ(InfoField(admin, "persistence", "aof_last_bgrewrite_status"), "ok");
    EXPECT_EQ(admin.Command("PING"), "+PONG\r\n");
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace latch::test
