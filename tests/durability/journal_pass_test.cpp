// The io thread's end-of-pass flush (journal_pass.cpp), in-process: the replies of one pass
// share one write() (and under always one fdatasync) done by the io thread itself, run there
// after it and never before; a failed write holds them and reports the error; a failed
// fdatasync under always ends the process before any of them; a writer busy elsewhere hands
// the batch to the journal thread, whose sync releases it.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spdlog/logger.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
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

// The test thread plays an io thread: its appends wake nobody, its pass flushes them.
struct JournalPassIoThread {
  JournalPassIoThread() { detail::t_flushes_own = true; }
  ~JournalPassIoThread() { detail::t_flushes_own = false; }
};

// Appends `n` records "<tag><i>\n" and asks, as n connections of one pass would, for each
// to be durable; `done` gets the record's text.
template <class Done>
void JournalPassOne(Journal& j, boost::asio::io_context& ctx, int n, const std::string& tag,
                    Done done) {
  for (int i = 0; i < n; ++i) {
    const std::string rec = tag + std::to_string(i) + "\n";
    const std::uint64_t seq = j.Append([&](std::string* out) { out->append(rec); });
    ASSERT_TRUE(j.WhenDurable(
        seq, [rec, done] { done(rec); }, &ctx))
        << rec;
  }
}

TEST(JournalPassTest, OnePassSharesOneWriteDoneByTheIoThreadBeforeItsReplies) {
  for (const FsyncPolicy policy : {FsyncPolicy::kAlways, FsyncPolicy::kEverysec}) {
    JournalTestFile file;
    JournalPassIoThread io;
    boost::asio::io_context ctx;
    std::atomic<int> writes{0};
    std::thread::id writer;
    Journal j(JournalTestLog(), file.fd, 0, policy, 0, nullptr, [&] {
      ++writes;
      writer = std::this_thread::get_id();
    });
    std::vector<std::string> replied;
    bool early = false;
    JournalPassOne(j, ctx, 20, "a", [&](const std::string& rec) {
      if (file.Read().find(rec) == std::string::npos) early = true;
      replied.push_back(rec);
    });
    EXPECT_TRUE(replied.empty()) << "a reply before the pass ended";
    EXPECT_EQ(writes.load(), 0) << "the journal thread was woken for an io thread's records";
    ctx.poll();
    ASSERT_EQ(replied.size(), 20u);
    for (int i = 0; i < 20; ++i) EXPECT_EQ(replied[i], "a" + std::to_string(i) + "\n");
    EXPECT_FALSE(early) << "a reply before its record was in the file";
    EXPECT_EQ(writes.load(), 1) << "one write() per pass";
    EXPECT_EQ(writer, std::this_thread::get_id()) << "written by the io thread";
    if (policy == FsyncPolicy::kAlways) {
      EXPECT_EQ(j.pending_fsyncs(), 0u);
    }
    // The next pass: its own write.
    JournalPassOne(j, ctx, 5, "b", [&](const std::string& rec) { replied.push_back(rec); });
    ctx.restart();  // poll() ran out of work and stopped it
    ctx.poll();
    EXPECT_EQ(replied.size(), 25u);
    EXPECT_EQ(writes.load(), 2);
  }
}

// A full disk on the io thread's write: nobody is answered, the error is published (the
// server's -MISCONF) and the journal thread retries; room again, the replies go, posted to
// their io_context.
TEST(JournalPassTest, AFailedWriteOnTheIoThreadHoldsThePassAndReportsIt) {
  for (const FsyncPolicy policy : {FsyncPolicy::kAlways, FsyncPolicy::kEverysec}) {
    JournalTestFile file;
    const int fd = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    JournalPassIoThread io;
    boost::asio::io_context ctx;
    std::atomic<int> error{0};
    int replied = 0;
    Journal j(JournalTestLog(), fd, 0, policy, 0, &error);
    JournalPassOne(j, ctx, 3, "held", [&](const std::string&) { ++replied; });
    ctx.poll();
    EXPECT_EQ(error.load(), ENOSPC);
    EXPECT_FALSE(j.last_write_ok());
    EXPECT_EQ(replied, 0) << "answered before its record was written";
    EXPECT_EQ(j.buffered_bytes(), 18u);
    ASSERT_EQ(::dup2(file.fd, fd), fd);  // room again: the journal thread's retry writes it
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (replied < 3 && std::chrono::steady_clock::now() < deadline) {
      ctx.restart();
      ctx.run_for(std::chrono::milliseconds(10));
    }
    EXPECT_EQ(replied, 3);
    EXPECT_EQ(error.load(), 0);
    EXPECT_EQ(file.Read(), "held0\nheld1\nheld2\n");
  }
}

// A pipe takes the write but refuses fdatasync (EINVAL): under always the process ends, as
// Redis's does, and no reply of the pass has run: the replies wait for the sync, not for the
// write.
TEST(JournalPassDeathTest, AFailedSyncEndsTheProcessBeforeAnyReply) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        int p[2];
        if (::pipe(p) != 0) std::_Exit(3);
        JournalPassIoThread io;
        boost::asio::io_context ctx;
        Journal j(JournalTestLog(), p[1], 0, FsyncPolicy::kAlways);
        JournalPassOne(j, ctx, 3, "r", [](const std::string&) {
          std::fputs("REPLIED\n", stderr);
          std::_Exit(2);
        });
        ctx.poll();
        std::_Exit(4);
      },
      ::testing::ExitedWithCode(1), "^$");
}

// Another thread is writing (its write() stalled in before_write, write_mu_ held): this io
// thread does not wait for it but hands its batch to the journal thread, and its replies come
// back posted to its io_context once that batch is synced.
TEST(JournalPassTest, AWriterBusyElsewhereHandsThePassToTheJournalThread) {
  JournalTestFile file;
  std::mutex mu;
  std::condition_variable cv;
  bool stalled = false, go = false;
  std::atomic<int> writes{0};
  Journal j(JournalTestLog(), file.fd, 0, FsyncPolicy::kAlways, 0, nullptr, [&] {
    if (writes++ != 0) return;
    std::unique_lock lock(mu);
    stalled = true;
    cv.notify_all();
    cv.wait(lock, [&] { return go; });
  });
  boost::asio::io_context first, second;
  std::atomic<int> replied{0};
  std::thread a([&] {
    JournalPassIoThread io;
    JournalPassOne(j, first, 1, "first", [&](const std::string&) { ++replied; });
    first.poll();  // its write stalls in before_write, holding write_mu_
  });
  {
    std::unique_lock lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(5), [&] { return stalled; }));
  }
  {
    JournalPassIoThread io;
    JournalPassOne(j, second, 1, "second", [&](const std::string&) { ++replied; });
    second.poll();  // finds write_mu_ taken: the journal thread's, once it is free
  }
  EXPECT_EQ(replied.load(), 0);
  {
    std::lock_guard lock(mu);
    go = true;
  }
  cv.notify_all();
  a.join();
  EXPECT_EQ(replied.load(), 1);  // the first pass's reply, run on its own thread
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (replied.load() < 2 && std::chrono::steady_clock::now() < deadline) {
    second.restart();
    second.run_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(replied.load(), 2);
  EXPECT_EQ(file.Read(), "first0\nsecond0\n");
}

}  // namespace
}  // namespace latch::journal
