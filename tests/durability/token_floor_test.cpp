// Fencing tokens across a restart whose wall clock went back an hour (libfaketime, as an NTP
// step or a VM restored from a snapshot would do it), against the latchd binary: with the
// journal alone, and with lock-restart-delay and no journal (the token floor file alone), the
// first token after the restart is above every token granted before. Plus the floor file in
// process (journal/token_floor.h) and the journal records no latchd can have written.
#include "journal/token_floor.h"

#include <gtest/gtest.h>
#include <spdlog/logger.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "durability/latchd_child.h"
#include "support/raw_connection.h"

namespace latch::test {
namespace {

using std::chrono::milliseconds;
namespace fs = std::filesystem;

constexpr std::int64_t kHourBack = 3600;

// libfaketime under latchd: its wall clock an hour behind, its monotonic clock untouched (a
// stepped wall clock does not move CLOCK_MONOTONIC either). The MT build: latchd has threads.
std::vector<std::string> HourEarlier() {
  std::string lib;
  std::error_code ec;
  for (const auto& dir : fs::directory_iterator("/usr/lib", ec)) {
    const fs::path p = dir.path() / "faketime" / "libfaketimeMT.so.1";
    if (fs::exists(p, ec)) lib = p.string();
  }
  if (lib.empty()) {
    ADD_FAILURE() << "libfaketime is missing: scripts/deps.sh test installs faketime";
    return {};
  }
  return {"LD_PRELOAD=" + lib, "FAKETIME=-" + std::to_string(kHourBack) + "s",
          "FAKETIME_DONT_FAKE_MONOTONIC=1"};
}

// The server's TIME in seconds.
std::int64_t ServerSeconds(RawConnection& c) {
  const std::string r = c.Command("TIME");  // *2\r\n$10\r\n<seconds>\r\n$6\r\n<us>\r\n
  const auto start = r.find("\r\n", r.find('$')) + 2;
  return std::stoll(r.substr(start, r.find("\r\n", start) - start));
}

std::int64_t OurSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// LOCK.ACQUIRE until granted (lock-restart-delay holds grants back for a while): the token.
std::uint64_t AcquireWhenAllowed(RawConnection& c, const std::string& key) {
  for (int i = 0; i < 500; ++i) {
    if (const std::uint64_t t = IntegerReply(c.Command("LOCK.ACQUIRE", key, "owner", "60000")))
      return t;
    std::this_thread::sleep_for(milliseconds(10));  // polling the delay's end, bounded: 5 s
  }
  return 0;
}

// Grants on several keys, a release and a re-grant: the highest token given.
std::uint64_t GrantSome(RawConnection& c) {
  std::uint64_t highest = 0;
  for (int i = 0; i < 5; ++i) {
    highest = std::max(highest, AcquireWhenAllowed(c, "k" + std::to_string(i)));
  }
  EXPECT_EQ(c.Command("LOCK.RELEASE", "k0", "owner"), ":1\r\n");
  highest = std::max(highest, AcquireWhenAllowed(c, "k0"));
  EXPECT_NE(highest, 0u);
  return highest;
}

// Restarts `s` an hour earlier and checks the clock really went back (else the test proves
// nothing), then that the first grants are above `highest`.
void ExpectAboveAfterAnHourBack(LatchdChild& s, std::uint64_t highest) {
  s.set_env(HourEarlier());
  ASSERT_TRUE(s.Start()) << s.Log();
  RawConnection c(s.port());
  ASSERT_LT(ServerSeconds(c), OurSeconds() - kHourBack + 60) << "faketime did not apply";
  EXPECT_GT(AcquireWhenAllowed(c, "fresh"), highest);
  EXPECT_GT(AcquireWhenAllowed(c, "k0"), highest) << "the released key, granted again";
}

TEST(TokenFloorRestartTest, JournalKeepsTokensAboveAfterTheClockWentBack) {
  LatchdChild s({"--appendonly", "yes"});
  ASSERT_TRUE(s.Start()) << s.Log();
  std::uint64_t highest;
  {
    RawConnection c(s.port());
    highest = GrantSome(c);
    // Every lock released, then a rewrite: only its LATCH.FENCE still carries the counter.
    for (int i = 0; i < 5; ++i) c.Command("LOCK.RELEASE", "k" + std::to_string(i), "owner");
    EXPECT_EQ(c.Command("BGREWRITEAOF"), "+Background append only file rewriting started\r\n");
    ASSERT_TRUE(WaitForInfo(s.port(), "aof_rewrites:1"));
  }
  s.Kill9();
  // The journal alone: without the floor file too.
  fs::remove(s.dir() + "/" + std::string(journal::kTokenFloorFile));
  ExpectAboveAfterAnHourBack(s, highest);
}

TEST(TokenFloorRestartTest, LockRestartDelayWithoutJournalKeepsTokensAbove) {
  LatchdChild s({"--lock-restart-delay", "300"});
  ASSERT_TRUE(s.Start()) << s.Log();
  std::uint64_t highest;
  {
    RawConnection c(s.port());
    highest = GrantSome(c);
    EXPECT_EQ(InfoField(c, "persistence", "token_floor_status"), "ok");
  }
  s.Kill9();
  ExpectAboveAfterAnHourBack(s, highest);
}

TEST(TokenFloorRestartTest, NoFloorWithoutJournalOrDelay) {
  LatchdChild s({});
  ASSERT_TRUE(s.Start()) << s.Log();
  RawConnection c(s.port());
  EXPECT_NE(IntegerReply(c.Command("LOCK.ACQUIRE", "k", "o", "1000")), 0u);
  EXPECT_EQ(InfoField(c, "persistence", "token_floor"), "<missing>");
  EXPECT_FALSE(fs::exists(s.dir() + "/" + std::string(journal::kTokenFloorFile)));
}

TEST(TokenFloorRestartTest, ADamagedFloorRefusesTheStart) {
  for (const std::string bad : {"", "12ab\n", "6917529027641081857\n", "99999999999999999999"}) {
    LatchdChild s({"--lock-restart-delay", "100"});
    std::ofstream(s.dir() + "/" + std::string(journal::kTokenFloorFile)) << bad;
    // Without a journal the port may answer for a moment before the floor is read: the
    // child must then exit by itself, having granted nothing (the delay holds grants back).
    if (s.Start()) {
      EXPECT_TRUE(s.WaitForExit(milliseconds(5000))) << "floor '" << bad << "'";
    }
    EXPECT_FALSE(s.running());
    EXPECT_NE(s.Log().find("Bad fencing token floor"), std::string::npos) << s.Log();
  }
}

// A journal record whose token no latchd can have granted (the next grants would turn
// negative or wrap) is a damaged journal: refused, also with aof-load-truncated yes.
TEST(TokenFloorRestartTest, AJournalTokenOutOfRangeRefusesTheLoad) {
  const std::vector<std::string> bad = {"9223372036854775807", "18446744073709551615",
                                        "18446744073709551616", "6917529027641081857"};
  for (const std::string& token : bad) {
    for (const char* record : {"LATCH.FENCE", "LATCH.LOCK"}) {
      LatchdChild s({"--appendonly", "yes", "--aof-load-truncated", "yes"});
      ASSERT_TRUE(s.Start()) << s.Log();
      s.Stop();
      std::vector<std::string> args = {record};
      if (args[0] == "LATCH.LOCK") args.insert(args.end(), {"key", "owner"});
      args.push_back(token);
      std::ofstream(s.aof_dir() + "/appendonly.aof.1.incr.aof", std::ios::app)
          << RawConnection::Encode(args);
      EXPECT_FALSE(s.Start()) << record << " " << token;
      EXPECT_NE(s.Log().find("Bad fencing token " + token), std::string::npos) << s.Log();
    }
  }
}

TEST(TokenFloorRestartTest, TheLargestValidJournalTokenLoadsAndTheNextStaysPositive) {
  LatchdChild s({"--appendonly", "yes"});
  ASSERT_TRUE(s.Start()) << s.Log();
  s.Stop();
  std::ofstream(s.aof_dir() + "/appendonly.aof.1.incr.aof", std::ios::app)
      << RawConnection::Encode({"LATCH.FENCE", "6917529027641081856"});
  ASSERT_TRUE(s.Start()) << s.Log();
  RawConnection c(s.port());
  EXPECT_EQ(c.Command("LOCK.ACQUIRE", "k", "o", "1000"), ":6917529027641081857\r\n");
}

// In process: the file itself.
class TokenFloorFileTest : public ::testing::Test {
 protected:
  TokenFloorFileTest() {
    char d[] = "/tmp/latch-floor-XXXXXX";
    dir_ = ::mkdtemp(d) != nullptr ? d : "";
    path_ = dir_ + "/" + std::string(journal::kTokenFloorFile);
  }
  ~TokenFloorFileTest() override { fs::remove_all(dir_); }
  std::uint64_t Stored() const {
    std::uint64_t v = 0;
    std::ifstream(path_) >> v;
    return v;
  }
  std::string dir_, path_;
  std::int64_t wall_us_ = 1'796'000'000'000'000;
  spdlog::logger log_{"token-floor-test"};  // no sink: the floor's notices are not checked
};

TEST_F(TokenFloorFileTest, StartsAboveTheStoredFloorAndReservesAhead) {
  std::ofstream(path_) << "1900000000000000000\n";  // ahead of the wall clock
  store::FencingTokens tokens;
  {
    journal::TokenFloor floor(
        tokens, path_, [&] { return wall_us_; }, log_);
    floor.Start();
    EXPECT_GT(tokens.Next(wall_us_), 1900000000000000000u);
    EXPECT_EQ(Stored(), 1900000000000000000u + store::FencingTokens::kReserveAheadNs);
    EXPECT_EQ(floor.saves(), 1u);
  }
  EXPECT_FALSE(fs::exists(path_ + ".tmp"));
}

TEST_F(TokenFloorFileTest, FollowsTheWallClockAndMovesWithDir) {
  store::FencingTokens tokens;
  journal::TokenFloor floor(
      tokens, path_, [&] { return wall_us_; }, log_);
  floor.Start();  // no file yet: a first start
  const std::uint64_t first = Stored();
  EXPECT_EQ(first,
            static_cast<std::uint64_t>(wall_us_) * 1000 + store::FencingTokens::kReserveAheadNs);
  const std::string moved = dir_ + "/moved.floor";
  floor.Move(moved);
  std::uint64_t there = 0;
  std::ifstream(moved) >> there;
  EXPECT_EQ(there, first);
}

TEST_F(TokenFloorFileTest, AnUnwritableDirectoryRefusesTheStart) {
  store::FencingTokens tokens;
  journal::TokenFloor floor(
      tokens, dir_ + "/missing/floor", [&] { return wall_us_; }, log_);
  EXPECT_THROW(floor.Start(), std::runtime_error);
  EXPECT_EQ(tokens.reserved(), UINT64_MAX) << "not registered";
}

}  // namespace
}  // namespace latch::test
