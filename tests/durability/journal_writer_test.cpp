// The journal writer in-process: group commit from many threads keeps every record, in each
// thread's order; `always` completions fire once the record is synced and never before it is
// in the file; a file switch splits the stream at the call.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spdlog/logger.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "durability/journal_test_file.h"
#include "journal/journal.h"

namespace latch::journal {
namespace {

using test::JournalTestFile;
using test::JournalTestLog;

TEST(JournalWriterTest, GroupCommitKeepsEveryRecordInEachThreadsOrder) {
  JournalTestFile file;
  constexpr int kThreads = 4;
  constexpr int kRecords = 500;
  std::atomic<int> completions{0}, waited{0};
  std::mutex mu;
  std::string bad;
  {
    Journal j(JournalTestLog(), file.fd, 0, FsyncPolicy::kAlways);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < kRecords; ++i) {
          const std::string rec = "t" + std::to_string(t) + ":" + std::to_string(i) + "\n";
          const std::uint64_t seq = j.Append([&](std::string* out) { out->append(rec); });
          EXPECT_EQ(ThisThreadLastSeq(), seq);
          if (i % 50 != 0) continue;
          // When the completion runs, the record must already be in the file.
          const bool waits = j.WhenDurable(seq, [&, rec] {
            if (file.Read().find(rec) == std::string::npos) {
              std::lock_guard lock(mu);
              bad = rec;
            }
            completions.fetch_add(1);
          });
          if (waits) waited.fetch_add(1);
        }
      });
    }
    for (auto& th : threads) th.join();
    j.Sync();
  }
  EXPECT_EQ(completions.load(), waited.load());
  EXPECT_TRUE(bad.empty()) << bad << " completed before it was written";
  std::istringstream lines(file.Read());
  std::vector<int> next(kThreads, 0);
  std::string line;
  int total = 0;
  while (std::getline(lines, line)) {
    const int t = line[1] - '0';
    EXPECT_EQ(line, "t" + std::to_string(t) + ":" + std::to_string(next[t]++));
    ++total;
  }
  EXPECT_EQ(total, kThreads * kRecords);
}

TEST(JournalWriterTest, OnlyAlwaysHoldsReplies) {
  JournalTestFile file;
  Journal j(JournalTestLog(), file.fd, 0, FsyncPolicy::kEverysec);
  const std::uint64_t seq = j.Append([](std::string* out) { out->append("x\n"); });
  EXPECT_FALSE(j.WhenDurable(seq, [] { ADD_FAILURE() << "everysec never holds a reply"; }));
  j.Sync();
  j.set_policy(FsyncPolicy::kAlways);
  EXPECT_FALSE(j.WhenDurable(seq, [] { ADD_FAILURE() << "already synced"; }));
  EXPECT_EQ(j.file_size(), 2u);
}

TEST(JournalWriterTest, SwitchFileSplitsTheStreamAtTheCall) {
  JournalTestFile first, second;
  {
    Journal j(JournalTestLog(), first.fd, 0, FsyncPolicy::kAlways);
    for (int i = 0; i < 100; ++i) j.Append([](std::string* out) { out->append("old\n"); });
    j.SwitchFile(second.fd, 0);
    for (int i = 0; i < 50; ++i) j.Append([](std::string* out) { out->append("new\n"); });
    j.Sync();
    EXPECT_EQ(j.file_size(), 200u);
  }
  std::string old_text, new_text;
  for (int i = 0; i < 100; ++i) old_text += "old\n";
  for (int i = 0; i < 50; ++i) new_text += "new\n";
  EXPECT_EQ(first.Read(), old_text);
  EXPECT_EQ(second.Read(), new_text);
}

// CONFIG SET appendonly no, then yes: the new journal continues the old one's numbers, so a
// number a connection took from the old journal is never waited for on the new one (it would
// hold that connection's replies until the new journal caught up); a closed journal holds
// nothing and its file has everything appended before the close.
TEST(JournalWriterTest, ReopenedJournalContinuesNumbersAndClosedOneHoldsNothing) {
  JournalTestFile first, second;
  Journal old(JournalTestLog(), first.fd, 0, FsyncPolicy::kAlways);
  std::uint64_t last = 0;
  for (int i = 0; i < 10; ++i) last = old.Append([](std::string* out) { out->append("a\n"); });
  old.Close();
  EXPECT_FALSE(old.WhenDurable(last, [] { ADD_FAILURE() << "closed: nothing to wait for"; }));
  EXPECT_EQ(first.Read().size(), 20u);
  Journal fresh(JournalTestLog(), second.fd, 0, FsyncPolicy::kAlways, old.appended());
  EXPECT_FALSE(fresh.WhenDurable(last, [] { ADD_FAILURE() << "an old number is never held"; }));
  EXPECT_EQ(fresh.Append([](std::string* out) { out->append("b\n"); }), last + 1);
  std::atomic<bool> done{false};
  if (fresh.WhenDurable(last + 1, [&] { done = true; })) fresh.Sync();
  fresh.Close();
  EXPECT_EQ(second.Read(), "b\n");
}

// A connection's completion runs on its io_context (the journal posts a batch's completions
// there together), never before its record is in the file; Close releases what still waits.
TEST(JournalWriterTest, CompletionsRunOnTheWaitersIoContextAfterTheirRecord) {
  JournalTestFile file;
  boost::asio::io_context ctx;
  auto work = boost::asio::make_work_guard(ctx);
  std::thread io([&] { ctx.run(); });
  const std::thread::id io_id = io.get_id();
  constexpr int kRecords = 200;
  std::atomic<int> done{0};
  std::atomic<int> wrong{0};
  {
    Journal j(JournalTestLog(), file.fd, 0, FsyncPolicy::kAlways);
    for (int i = 0; i < kRecords; ++i) {
      const std::string rec = "r" + std::to_string(i) + "\n";
      const std::uint64_t seq = j.Append([&](std::string* out) { out->append(rec); });
      const bool waits = j.WhenDurable(
          seq,
          [&, rec] {
            if (std::this_thread::get_id() != io_id) ++wrong;
            if (file.Read().find(rec) == std::string::npos) ++wrong;
            ++done;
          },
          &ctx);
      if (!waits) ++done;
    }
  }  // Close
  work.reset();
  io.join();
  EXPECT_EQ(done.load(), kRecords);
  EXPECT_EQ(wrong.load(), 0);
}

// Waits (bounded: 5 s) until `cond` holds.
template <class Cond>
bool Eventually(Cond cond) {
  for (int i = 0; i < 500 && !cond(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return cond();
}

// A write that fails (a full disk: /dev/full) holds the reply under every policy, says why
// through error_out (the server's -MISCONF) and is retried by the journal thread; once the
// file takes writes again (a real file dup2'd over the same descriptor) the record is
// written whole, the error clears and the reply goes.
TEST(JournalWriterTest, AFailedWriteHoldsItsReplyUntilARetryWritesIt) {
  for (const FsyncPolicy policy :
       {FsyncPolicy::kEverysec, FsyncPolicy::kNo, FsyncPolicy::kAlways}) {
    JournalTestFile file;
    const int fd = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    std::atomic<int> error{0};
    std::atomic<bool> done{false};
    Journal j(JournalTestLog(), fd, 0, policy, 0, &error);
    const std::uint64_t seq = j.Append([](std::string* out) { out->append("held\n"); });
    EXPECT_TRUE(j.WhenDurable(seq, [&] { done = true; }));
    EXPECT_TRUE(Eventually([&] { return error.load() == ENOSPC; }));
    EXPECT_FALSE(j.last_write_ok());
    EXPECT_EQ(j.buffered_bytes(), 5u);
    EXPECT_FALSE(done.load()) << "answered before its record was written";
    ASSERT_EQ(::dup2(file.fd, fd), fd);  // room again
    EXPECT_TRUE(Eventually([&] { return done.load(); }));
    EXPECT_EQ(error.load(), 0);
    EXPECT_TRUE(j.last_write_ok());
    EXPECT_EQ(file.Read(), "held\n");
    EXPECT_EQ(j.file_size(), 5u);
  }
}

// everysec: a record reaches the file within moments without anyone asking (the writer paces
// its write()s but does not sit on records), and Sync() cuts the pause short.
TEST(JournalWriterTest, EverysecWritesWithoutBeingAsked) {
  JournalTestFile file;
  Journal j(JournalTestLog(), file.fd, 0, FsyncPolicy::kEverysec);
  for (int round = 0; round < 3; ++round) {
    const std::string rec = "e" + std::to_string(round) + "\n";
    j.Append([&](std::string* out) { out->append(rec); });
    bool found = false;
    for (int i = 0; i < 200 && !found; ++i) {
      found = file.Read().find(rec) != std::string::npos;
      if (!found) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    EXPECT_TRUE(found) << rec;
  }
  j.Append([](std::string* out) { out->append("last\n"); });
  j.Sync();
  EXPECT_EQ(file.Read(), "e0\ne1\ne2\nlast\n");
}

}  // namespace
}  // namespace latch::journal
