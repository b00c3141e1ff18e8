#include "journal/journal.h"

#include <spdlog/logger.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "journal/record_codec.h"

namespace latch::journal {

void Journal::AppendSelect(std::string* out, int db) { EncodeSelect(out, db); }

namespace {
using std::chrono::steady_clock;
constexpr auto kEverysec = std::chrono::seconds(1);
constexpr auto kRetryAfterError = std::chrono::milliseconds(100);
constexpr auto kGatherAtMost = std::chrono::milliseconds(1);
// everysec and no: the longest a record waits in the buffer for its write() (journal.h).
constexpr auto kWriteEvery = std::chrono::microseconds(250);
}  // namespace

Journal::Journal(spdlog::logger& log, int fd, std::uint64_t size, FsyncPolicy policy,
                 std::uint64_t last_seq, std::atomic<int>* error_out,
                 std::function<void()> before_write, std::function<bool()> may_sync_inline)
    : log_(log),
      appended_(last_seq),
      written_(last_seq),
      synced_(last_seq),
      fsynced_(last_seq),
      fd_(fd),
      before_write_(std::move(before_write)),
      may_sync_inline_(std::move(may_sync_inline)),
      policy_(policy),
      file_size_(size),
      error_out_(error_out) {
  thread_ = std::thread([this] { Run(); });
}

Journal::~Journal() { Close(); }

void Journal::Close() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_one();
  if (!thread_.joinable()) return;
  thread_.join();
  if (next_fd_ >= 0) ::close(next_fd_);
  next_fd_ = -1;
  ::close(fd_);
  fd_ = -1;
}

std::uint64_t Journal::appended() const {
  std::lock_guard lock(mu_);
  return appended_;
}

bool Journal::WhenDurable(std::uint64_t seq, std::function<void()> done,
                          boost::asio::io_context* on) {
  const bool always = policy() == FsyncPolicy::kAlways;
  if (on != nullptr && (!always || MaySyncInline())) {
    return DeferToPass(seq, std::move(done), *on, always);
  }
  if (!always && WriteOut(seq)) return false;
  std::lock_guard lock(mu_);
  const std::uint64_t reached = always ? synced_ : written_.load(std::memory_order_relaxed);
  if (reached >= seq || stop_) return false;
  waiters_.push_back({seq, on, std::move(done), always});
  // The journal thread syncs it, or retries the write (it may be idle: an io thread's append
  // does not wake it, nor does a write that failed on an io thread).
  HandToWriterLocked();
  return true;
}

std::size_t Journal::buffered_bytes() const {
  std::lock_guard lock(mu_);
  return buf_.size() + in_flight_.load(std::memory_order_relaxed);
}

// On the io thread about to send replies that depend on record `seq`. Whoever comes first
// writes every record buffered so far; the others find theirs written and go on.
bool Journal::WriteOut(std::uint64_t seq) {
  if (written_.load(std::memory_order_acquire) >= seq) return true;
  // While writes fail (disk full) the journal thread retries them: the reply waits for that
  // (WhenDurable) rather than this thread trying again.
  if (!last_write_ok_.load(std::memory_order_relaxed)) return false;
  std::unique_lock wlock(write_mu_);
  std::unique_lock lock(mu_);
  if (written_.load(std::memory_order_relaxed) >= seq) return true;
  if (stop_) return false;  // WhenDurable lets the reply go: Close writes what it can
  if (next_fd_ >= 0) {
    // A file switch is pending (a rewrite's last step): the journal thread, already woken by
    // SwitchFile, writes the old file's tail first. Wait for it without write_mu_.
    wlock.unlock();
    synced_cv_.wait(lock, [&] {
      return written_.load(std::memory_order_relaxed) >= seq || stop_ ||
             !last_write_ok_.load(std::memory_order_relaxed);
    });
    return written_.load(std::memory_order_relaxed) >= seq;
  }
  bool was_clean = false;
  TakeAndWrite(lock, &was_clean);
  // The journal thread idles without a deadline while nothing is unsynced: give it the
  // everysec deadline for what was just written (once, not for every write).
  if (was_clean && writer_idle_) cv_.notify_one();
  return written_.load(std::memory_order_relaxed) >= seq;
}

std::uint64_t Journal::TakeAndWrite(std::unique_lock<std::mutex>& lock, bool* was_clean,
                                    bool closing) {
  batch_.swap(buf_);
  buf_.clear();
  wanted_ = false;
  const std::uint64_t end = appended_;
  int switch_fd = std::exchange(next_fd_, -1);
  const std::size_t split = switch_at_;
  const std::uint64_t switch_size = next_size_;
  in_flight_.store(batch_.size(), std::memory_order_relaxed);
  lock.unlock();
  if (before_write_ && !batch_.empty()) before_write_();
  std::size_t done = 0;  // bytes of batch_ in a file
  if (switch_fd >= 0) {
    // The old file's tail, synced and closed before the new file gets a byte.
    done = WriteAll(std::string_view(batch_).substr(0, split));
    if (done == split) {
      SyncFd(fd_);
      ::close(fd_);
      fd_ = std::exchange(switch_fd, -1);
      file_size_.store(switch_size, std::memory_order_relaxed);
    }
  }
  if (switch_fd < 0 && done < batch_.size()) {
    // Marked before the write(): an fdatasync that clears the mark after this point runs
    // after the write() started, and one that cleared it before leaves it set for the next.
    const bool clean = !dirty_.exchange(true, std::memory_order_acq_rel);
    if (was_clean != nullptr) *was_clean = clean;
    done += WriteAll(std::string_view(batch_).substr(done));
  }
  in_flight_.store(0, std::memory_order_relaxed);
  if (done < batch_.size() && !closing) {
    lock.lock();
    PutBack(done, switch_fd, split, switch_size);
    return end;  // not written_: the caller sees the failure as written_ < end
  }
  if (done < batch_.size()) {
    log_.warn("The AOF is closed with {} bytes that could not be written", batch_.size() - done);
    if (switch_fd >= 0) ::close(switch_fd);
  }
  batch_.clear();
  if (batch_.capacity() > (1u << 20)) batch_.shrink_to_fit();
  lock.lock();
  written_.store(end, std::memory_order_release);
  return end;
}

// A write failed: what was not written goes back in front of what was appended since, for the
// journal thread to retry, and nothing counts as written. A file switch that did not happen
// is pending again, unless a later SwitchFile came meanwhile: then that one replaces it, as
// when two switches fall into one batch.
void Journal::PutBack(std::size_t done, int switch_fd, std::size_t split,
                      std::uint64_t switch_size) {
  const std::string_view rest = std::string_view(batch_).substr(done);
  buf_.insert(0, rest);
  if (switch_fd >= 0 && next_fd_ < 0) {
    next_fd_ = switch_fd;
    next_size_ = switch_size;
    switch_at_ = split - done;
  } else {
    if (switch_fd >= 0) ::close(switch_fd);
    if (next_fd_ >= 0) switch_at_ += rest.size();  // its offset did not count these bytes
  }
  batch_.clear();
  HandToWriterLocked();
}

// A batch releases the replies of tens to hundreds of connections that live on a few
// io_contexts: one post per io_context carries them all (waking a worker once), in the order
// the connections asked.
void Journal::Release(std::vector<Waiter>& ready) {
  std::stable_sort(ready.begin(), ready.end(),
                   [](const Waiter& a, const Waiter& b) { return a.on < b.on; });
  for (std::size_t i = 0; i < ready.size();) {
    std::size_t end = i + 1;
    while (end < ready.size() && ready[end].on == ready[i].on) ++end;
    if (ready[i].on == nullptr) {
      for (; i < end; ++i) ready[i].done();
      continue;
    }
    std::vector<std::function<void()>> group;
    group.reserve(end - i);
    for (std::size_t k = i; k < end; ++k) group.push_back(std::move(ready[k].done));
    boost::asio::post(*ready[i].on, [group = std::move(group)] {
      for (const auto& done : group) done();
    });
    i = end;
  }
}

void Journal::Sync() {
  std::unique_lock lock(mu_);
  const std::uint64_t target = appended_;
  sync_requested_ = true;
  writer_idle_ = false;
  cv_.notify_one();  // idle, or pausing between writes (Run)
  synced_cv_.wait(lock, [&] { return fsynced_ >= target || stop_; });
}

void Journal::SwitchFile(int fd, std::uint64_t size) {
  {
    std::lock_guard lock(mu_);
    if (next_fd_ >= 0) ::close(next_fd_);  // two switches in one batch: the first never ran
    next_fd_ = fd;
    next_size_ = size;
    switch_at_ = buf_.size();
    selected_db_ = 0;  // the new file starts in database 0, as the loader does
    writer_idle_ = false;
  }
  cv_.notify_one();
}

std::size_t Journal::WriteAll(std::string_view data) {
  const std::uint64_t at = file_size_.load(std::memory_order_relaxed);
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd_, data.data() + done, data.size() - done);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    const int err = n < 0 ? errno : ENOSPC;
    // As Redis: a partial write is cut off again, so that the file ends on a record boundary
    // (a crash meanwhile leaves no torn record) and the retry writes the batch whole.
    if (done > 0 && ::ftruncate(fd_, static_cast<off_t>(at)) == 0) done = 0;
    file_size_.fetch_add(done, std::memory_order_relaxed);
    WriteFailed(err);
    return done;
  }
  file_size_.fetch_add(done, std::memory_order_relaxed);
  if (!last_write_ok_.load(std::memory_order_relaxed) && !last_write_ok_.exchange(true)) {
    write_errno_.store(0, std::memory_order_relaxed);
    PublishError();
    log_.warn("AOF write error looks solved, Redis can write again.");
  }
  return done;
}

void Journal::WriteFailed(int err) {
  write_errno_.store(err, std::memory_order_relaxed);
  if (last_write_ok_.exchange(false)) {
    log_.warn("Error writing to the AOF file: {}", std::strerror(err));
  }
  PublishError();
  // WriteOut may wait on synced_cv_ for a file switch that this error holds up.
  { std::lock_guard lock(mu_); }
  synced_cv_.notify_all();
}

// What the server refuses writes for (-MISCONF): the write error first, then the sync error.
void Journal::PublishError() {
  if (error_out_ == nullptr) return;
  const int w = write_errno_.load(std::memory_order_relaxed);
  error_out_->store(w != 0 ? w : fsync_errno_.load(std::memory_order_relaxed),
                    std::memory_order_relaxed);
}

void Journal::SyncFd(int fd) {
  if (::fdatasync(fd) == 0) {
    if (fsync_errno_.exchange(0, std::memory_order_relaxed) != 0) PublishError();
    return;
  }
  const int err = errno;
  if (policy() == FsyncPolicy::kAlways) {
    log_.critical(
        "Can't persist AOF for fsync error when the AOF fsync policy is 'always': "
        "{}. Exiting...",
        std::strerror(err));
    std::_Exit(1);
  }
  // As Redis's background fsync: EBADF and EINVAL are no failure of the data's; any other
  // error stops writes (-MISCONF) until a later sync works, which the next second retries.
  if (err == EBADF || err == EINVAL) return;
  if (fsync_errno_.exchange(err, std::memory_order_relaxed) == 0) {
    log_.warn("Fail to fsync the AOF file: {}", std::strerror(err));
  }
  PublishError();
  dirty_.store(true, std::memory_order_release);
}

// appendfsync always: the replies of the batch just synced were released a moment ago, and
// their clients' next writes are on their way. Syncing at once what arrived during the last
// sync splits the clients into two groups that take turns (each reply then waits for about
// two syncs, and each sync carries half the clients: measured 373 records per fdatasync at
// c50 P16 against Redis's 543). So when fewer records wait than the last batch held, wait
// for them a little: at most a quarter of the last sync's duration (capped at 1 ms), until
// as many records as the last batch are in. An idle server (nothing buffered) never waits.
void Journal::GatherLocked(std::unique_lock<std::mutex>& lock, std::uint64_t last_batch,
                           std::chrono::steady_clock::duration last_sync_took) {
  const std::uint64_t waiting = appended_ - synced_;
  if (waiting == 0 || waiting >= last_batch || stop_ || sync_requested_ || next_fd_ >= 0) return;
  const auto limit = std::min<steady_clock::duration>(last_sync_took / 4, kGatherAtMost);
  gathering_ = true;
  gather_until_ = synced_ + last_batch;
  cv_.wait_for(lock, limit, [&] { return appended_ >= gather_until_ || stop_; });
  gathering_ = false;
}

void Journal::Run() {
  auto last_sync = steady_clock::now();
  std::uint64_t last_batch = 0;  // records in the last batch synced under always
  steady_clock::duration last_sync_took{};
  std::unique_lock lock(mu_);
  for (;;) {
    // buf_ may hold records of io threads, which write them at the end of their pass.
    while (!wanted_ && next_fd_ < 0 && !stop_ && !sync_requested_) {
      writer_idle_ = true;
      if (dirty_.load(std::memory_order_acquire) && policy() == FsyncPolicy::kEverysec) {
        if (cv_.wait_until(lock, last_sync + kEverysec) == std::cv_status::timeout) break;
      } else {
        cv_.wait(lock);
      }
    }
    writer_idle_ = false;
    lock.unlock();
    std::unique_lock wlock(write_mu_);  // lock order: write_mu_, then mu_
    lock.lock();
    if (policy() == FsyncPolicy::kAlways) GatherLocked(lock, last_batch, last_sync_took);
    const bool sync_requested = std::exchange(sync_requested_, false);
    const bool stopping = stop_;
    const std::uint64_t written_before = written_.load(std::memory_order_relaxed);
    const std::uint64_t end = TakeAndWrite(lock, nullptr, /*closing=*/stopping);
    const std::uint64_t written = written_.load(std::memory_order_relaxed);
    wlock.unlock();
    if (written < end) {
      // A write error (disk full): the batch is back in the buffer and its replies wait.
      // Retry in a while, not holding write_mu_ (an io thread may be about to take it).
      sync_requested_ = sync_requested_ || sync_requested;  // still owed once it is written
      cv_.wait_for(lock, kRetryAfterError, [&] { return stop_; });
      continue;
    }
    lock.unlock();

    const auto now = steady_clock::now();
    const FsyncPolicy policy = this->policy();
    bool synced = false;
    // Under always, a batch this thread wrote is synced by this thread even when an io
    // thread's FlushPass cleared dirty_ meanwhile: that sync may still be running.
    const bool dirty = dirty_.load(std::memory_order_acquire) ||
                       (policy == FsyncPolicy::kAlways && end > written_before);
    if ((dirty && (policy == FsyncPolicy::kAlways ||
                   (policy == FsyncPolicy::kEverysec && now - last_sync >= kEverysec))) ||
        sync_requested || stopping) {
      dirty_.store(false, std::memory_order_release);  // a write() from now on marks it again
      SyncFd(fd_);
      last_sync_took = steady_clock::now() - now;
      last_batch = end - std::min(end, synced_);  // synced_: the end of the batch before
      last_sync = now;
      synced = true;
    }
    unsynced_.store(dirty_.load(std::memory_order_relaxed) ? 1 : 0, std::memory_order_relaxed);
    const bool pace = policy != FsyncPolicy::kAlways && !stopping;

    lock.lock();
    // Under always only what this thread synced counts: an io thread's sync (FlushPass) may
    // have counted more already, or be under way for what this thread found written.
    if (synced || policy != FsyncPolicy::kAlways) synced_ = std::max(synced_, end);
    if (synced) fsynced_ = std::max(fsynced_, written);
    ReleaseReady(lock, stopping);
    // everysec and no: what other threads append (the script thread) goes out in one write()
    // per kWriteEvery; io threads write theirs at the end of their pass (FlushPass). Sync, a
    // file switch and Close end the pause.
    if (pace) {
      cv_.wait_for(lock, kWriteEvery, [&] { return stop_ || sync_requested_ || next_fd_ >= 0; });
    }
    if (stopping && buf_.empty() && next_fd_ < 0) return;
  }
}

// The waiters whose records are now synced, or written for those that wait for no sync (all
// of them when stopping): run on their io_contexts. Called and returns with `lock` (mu_) held.
void Journal::ReleaseReady(std::unique_lock<std::mutex>& lock, bool stopping) {
  std::vector<Waiter> ready;
  const std::uint64_t written = written_.load(std::memory_order_relaxed);
  auto flush_pending = [&](const boost::asio::io_context* c) {
    return c != nullptr &&
           std::find(flush_posted_.begin(), flush_posted_.end(), c) != flush_posted_.end();
  };
  for (std::size_t i = 0; i < waiters_.size();) {
    // A waiter whose io thread has its FlushPass queued is released there, without a post.
    if ((waiters_[i].seq <= (waiters_[i].synced ? synced_ : written) &&
         !flush_pending(waiters_[i].on)) ||
        stopping) {
      ready.push_back(std::move(waiters_[i]));
      waiters_[i] = std::move(waiters_.back());
      waiters_.pop_back();
    } else {
      ++i;
    }
  }
  synced_cv_.notify_all();
  if (!ready.empty()) {
    lock.unlock();
    Release(ready);
    lock.lock();
  }
}

}  // namespace latch::journal
