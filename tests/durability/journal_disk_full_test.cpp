// A journal that cannot be written (a full disk), against the latchd binary: writes are refused
// with Redis's -MISCONF while the last write failed, reads go on, a write whose record could
// not be written is not acknowledged until it is, nothing acknowledged is lost to a kill -9
// while the disk is full, and writes are accepted again once there is room. Under every fsync
// policy (Redis exits under always; latchd need not: no reply went out before its sync).
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "durability/disk_full.h"
#include "durability/latchd_child.h"
#include "support/raw_connection.h"

namespace latch::test {
namespace {

using std::chrono::milliseconds;

class JournalDiskFullTest : public ::testing::TestWithParam<const char*> {
 protected:
  std::vector<std::string> Args() const {
    return {"--appendonly", "yes", "--appendfsync", GetParam()};
  }
};

// 8 KB: every record needs pages of its own, so none fits in the journal file's last page.
const std::string kValue(8192, 'v');

std::string Misconf(const JournalDiskFull& disk) {
  return "-MISCONF Errors writing to the AOF file: " + disk.Error() + "\r\n";
}

// The count of errorstat_MISCONF in INFO errorstats, 0 when there is none.
int MisconfCount(RawConnection& c) {
  const std::string v = InfoField(c, "errorstats", "errorstat_MISCONF");
  return v.starts_with("count=") ? std::stoi(v.substr(6)) : 0;
}

TEST_P(JournalDiskFullTest, WritesAreRefusedAndNothingAcknowledgedIsLostToAKill9) {
  LatchdChild s(Args());
  JournalDiskFull disk(s);
  ASSERT_TRUE(s.Start()) << s.Log();
  std::map<std::string, std::string> acked;
  {
    RawConnection c(s.port());
    for (int i = 0; i < 10; ++i) {
      const std::string key = "before:" + std::to_string(i);
      ASSERT_EQ(c.Command("SET", key, kValue), "+OK\r\n");
      acked[key] = kValue;
    }
  }
  ASSERT_TRUE(disk.Fill()) << disk.why();
  // One connection per write: a write whose record could not be written gets no reply (it
  // waits for the journal), and must not hold up the next.
  int misconf = 0;
  std::vector<RawConnection> held;
  for (int i = 0; i < 20; ++i) {
    RawConnection w(s.port(), milliseconds(300));
    const std::string key = "during:" + std::to_string(i);
    const std::string reply = w.Command("SET", key, kValue);
    if (reply == "+OK\r\n") {
      acked[key] = kValue;  // there was room for it after all: it is in the file
    } else if (reply == Misconf(disk)) {
      ++misconf;
    } else {
      ASSERT_TRUE(reply.starts_with("<no reply")) << reply;
      held.push_back(std::move(w));
    }
  }
  EXPECT_GE(misconf, 15) << disk.why() << "\n" << s.Log();
  EXPECT_LE(held.size(), 2u);
  RawConnection c(s.port());
  EXPECT_EQ(InfoField(c, "persistence", "aof_last_write_status"), "err");
  EXPECT_EQ(MisconfCount(c), misconf) << "every refusal is counted";
  EXPECT_NE(
      InfoField(c, "commandstats", "cmdstat_set").find("rejected_calls=" + std::to_string(misconf)),
      std::string::npos);
  // Reads go on; PING, transactions that write and lock grants are refused as by Redis.
  const std::string got = c.Command("GET", "before:0");
  EXPECT_TRUE(got == "$8192\r\n" + kValue + "\r\n") << got.substr(0, 80);
  EXPECT_EQ(c.Command("PING"), Misconf(disk));
  EXPECT_EQ(c.Command("MULTI"), "+OK\r\n");
  EXPECT_EQ(c.Command("DEL", "before:1"), Misconf(disk));
  EXPECT_EQ(c.Command("EXEC"), "-EXECABORT Transaction discarded because of previous errors.\r\n");
  EXPECT_EQ(c.Command("LOCK.ACQUIRE", "lock", "o", "60000"), Misconf(disk));
  EXPECT_EQ(c.Command("LOCK.RELEASE", "lock", "o"), Misconf(disk));

  s.Kill9();  // the disk still full
  ASSERT_TRUE(disk.Free()) << disk.why();
  ASSERT_TRUE(s.Start()) << s.Log();
  RawConnection after(s.port());
  for (const auto& [key, value] : acked) {
    EXPECT_EQ(after.Command("STRLEN", key), ":" + std::to_string(value.size()) + "\r\n") << key;
  }
  EXPECT_EQ(after.Command("EXISTS", "before:1"), ":1\r\n") << "refused: not applied";
}

TEST_P(JournalDiskFullTest, AHeldWriteIsAnsweredOnceThereIsRoomAgain) {
  LatchdChild s(Args());
  JournalDiskFull disk(s);
  ASSERT_TRUE(s.Start()) << s.Log();
  RawConnection multi(s.port());
  EXPECT_EQ(multi.Command("MULTI"), "+OK\r\n");
  EXPECT_EQ(multi.Command("SET", "queued", "v"), "+QUEUED\r\n");
  ASSERT_TRUE(disk.Fill()) << disk.why();
  RawConnection held(s.port(), milliseconds(300));
  ASSERT_TRUE(held.Send(RawConnection::Encode({"SET", "held", kValue})));
  ASSERT_TRUE(WaitForInfo(s.port(), "aof_last_write_status:err")) << s.Log();
  // Its record is not in the file: no reply, however long it waits (a bounded look).
  EXPECT_EQ(held.ReadReply(), std::nullopt);
  RawConnection c(s.port());
  EXPECT_EQ(c.Command("SET", "refused", "v"), Misconf(disk));
  // A transaction queued before the error: its EXEC is refused whole, in Redis's words.
  EXPECT_EQ(multi.Command("EXEC"),
            "-EXECABORT Transaction discarded because of: " + Misconf(disk).substr(1));

  ASSERT_TRUE(disk.Free()) << disk.why();
  std::optional<std::string> reply;
  for (int i = 0; i < 50 && !reply; ++i) reply = held.ReadReply();  // the retry: 100 ms
  EXPECT_EQ(reply, "+OK\r\n");
  ASSERT_TRUE(WaitForInfo(s.port(), "aof_last_write_status:ok"));
  EXPECT_EQ(c.Command("SET", "later", "v"), "+OK\r\n");
  EXPECT_EQ(c.Command("PING"), "+PONG\r\n");

  s.Kill9();
  ASSERT_TRUE(s.Start()) << s.Log();
  RawConnection after(s.port());
  EXPECT_EQ(after.Command("STRLEN", "held"), ":8192\r\n");
  EXPECT_EQ(after.Command("GET", "later"), "$1\r\nv\r\n");
  EXPECT_EQ(after.Command("EXISTS", "refused", "queued"), ":0\r\n");
}

INSTANTIATE_TEST_SUITE_P(Policies, JournalDiskFullTest,
                         ::testing::Values("everysec", "always", "no"),
                         [](const auto& info) { return std::string(info.param); });

}  // namespace
}  // namespace latch::test
