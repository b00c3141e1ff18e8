// The io thread's end-of-pass flush (issue 26): a connection whose replies wait for the
// journal registers them (DeferToPass) and, once per pass of its event loop, a FlushPass is
// posted behind the completions of that pass. It writes every record buffered so far with one
// write() and, under `always`, one fdatasync, then runs the pass's resumes on the spot: Redis's
// beforeSleep, where the clients read in one pass share one write and one sync.
//
// Why on the io thread: the journal thread's round trip (an io thread wakes it, it posts the
// resumes back) cost 0.50 thread switches per request at c50 P1 under `always` against Redis's
// 0.22, and a write() per connection under `everysec` (WriteOut at each StartWrite) one
// syscall per request at P1. Group commit stays: a pass carries every client it read, and an
// io thread that finds another writing (write_mu_ taken) leaves its batch to the journal
// thread, which takes it right after.
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include "journal/journal.h"

namespace latch::journal {

bool Journal::DeferToPass(std::uint64_t seq, std::function<void()> done,
                          boost::asio::io_context& on, bool always) {
  std::lock_guard lock(mu_);
  const std::uint64_t reached = always ? synced_ : written_.load(std::memory_order_relaxed);
  if (reached >= seq || stop_) return false;
  waiters_.push_back({seq, &on, std::move(done), always});
  PostFlushLocked(on);
  return true;
}

void Journal::FlushSoon(boost::asio::io_context& on) {
  std::lock_guard lock(mu_);
  if (!buf_.empty() && !wanted_ && !stop_) PostFlushLocked(on);
}

void Journal::PostFlushLocked(boost::asio::io_context& on) {
  for (const boost::asio::io_context* p : flush_posted_) {
    if (p == &on) return;
  }
  flush_posted_.push_back(&on);
  // Posted from the io thread itself: queued behind the completions of the pass under way.
  boost::asio::post(on, [this, &on] { FlushPass(on); });
}

void Journal::HandToWriterLocked() {
  wanted_ = true;
  writer_idle_ = false;
  cv_.notify_one();
}

void Journal::FlushPass(boost::asio::io_context& on, int looks) {
  const bool always = policy() == FsyncPolicy::kAlways;
  if (always && looks < kGatherLooks) {
    // As the journal thread's gathering (GatherLocked): the clients answered by the last sync
    // are sending again, and syncing fewer records than it carried splits the clients into
    // more groups taking turns (measured at c50 P1: 18 records per sync inline against
    // Redis's 28). Posted again, this flush runs after one more poll of the sockets and the
    // reads it completes (a post from a handler queues behind the reactor's next run).
    std::lock_guard lock(mu_);
    if (!stop_ && appended_ - written_.load(std::memory_order_relaxed) < last_inline_batch_) {
      boost::asio::post(on, [this, &on, looks] { FlushPass(on, looks + 1); });
      return;
    }
  }
  // Lock order: write_mu_, then mu_. Under always a sync may hold write_mu_ for milliseconds:
  // rather than wait for it, this thread leaves its batch to the journal thread.
  std::unique_lock wlock(write_mu_, std::defer_lock);
  if (always) {
    (void)wlock.try_lock();
  } else {
    wlock.lock();
  }
  std::unique_lock lock(mu_);
  std::erase(flush_posted_, &on);
  if (stop_) return;  // Close wrote what it could and ran every waiter
  // A big batch (pipelined clients) is synced by the journal thread, as before: the io thread
  // then goes on reading the next batch during the fdatasync instead of sitting in it; its
  // hand-off costs two switches per batch, nothing per request at that size (measured at c50
  // P16: 300-400 records per sync, 0.02 switches per request). Small batches (c50 P1: 21-25
  // per sync) are the ones whose hand-off costs a switch per few requests.
  const bool big = appended_ - written_.load(std::memory_order_relaxed) > kInlineSyncAtMost;
  if (!wlock.owns_lock() || (always && (!MaySyncInline() || big)) || next_fd_ >= 0 ||
      !last_write_ok_.load(std::memory_order_relaxed)) {
    // A file switch is the journal thread's (it writes the old file's tail first); a failed
    // write is retried there every 100 ms. The waiters stay registered: Release posts them.
    HandToWriterLocked();
    return;
  }
  bool was_clean = false;
  if (!buf_.empty()) {
    const std::uint64_t end = TakeAndWrite(lock, &was_clean);
    if (written_.load(std::memory_order_relaxed) < end) return;  // failed: PutBack handed it
  }
  if (always && dirty_.load(std::memory_order_acquire)) SyncInline(lock);
  wlock.unlock();
  // everysec: the journal thread idles without a deadline while nothing is unsynced; give it
  // the one-second deadline for what was just written (once, not for every write).
  if (!always && was_clean && writer_idle_) cv_.notify_one();
  std::vector<Waiter> own, posted;
  TakeReady(on, &own, &posted);
  synced_cv_.notify_all();  // Sync() waits for fsynced_
  lock.unlock();
  Release(posted);
  for (Waiter& w : own) w.done();
}

void Journal::SyncInline(std::unique_lock<std::mutex>& lock) {
  // Every write so far has returned (write_mu_ is held): one fdatasync started now covers
  // them all. write_mu_ stays held across it, so the journal thread cannot switch files and
  // close fd_ under it.
  const std::uint64_t covered = written_.load(std::memory_order_relaxed);
  last_inline_batch_ = covered - std::min(covered, synced_);
  dirty_.store(false, std::memory_order_release);
  lock.unlock();
  SyncFd(fd_);  // under always a failed fdatasync ends the process, as Redis (journal.h)
  lock.lock();
  synced_ = std::max(synced_, covered);
  fsynced_ = std::max(fsynced_, covered);
  unsynced_.store(0, std::memory_order_relaxed);
}

void Journal::TakeReady(boost::asio::io_context& on, std::vector<Waiter>* own,
                        std::vector<Waiter>* posted) {
  const std::uint64_t written = written_.load(std::memory_order_relaxed);
  auto flush_pending = [&](const boost::asio::io_context* c) {
    for (const boost::asio::io_context* p : flush_posted_) {
      if (p == c) return true;
    }
    return false;
  };
  // In the order the connections asked (the pass's clients are answered in read order).
  std::size_t kept = 0;
  for (Waiter& w : waiters_) {
    const bool ready = w.seq <= (w.synced ? synced_ : written);
    // The journal thread's waiters (no io_context) are its own to run; another io_context
    // with its FlushPass queued releases its waiters itself, without a post.
    if (!ready || w.on == nullptr || (w.on != &on && flush_pending(w.on))) {
      if (&waiters_[kept] != &w) waiters_[kept] = std::move(w);
      ++kept;
      continue;
    }
    (w.on == &on ? own : posted)->push_back(std::move(w));
  }
  waiters_.erase(waiters_.begin() + static_cast<std::ptrdiff_t>(kept), waiters_.end());
}

}  // namespace latch::journal
