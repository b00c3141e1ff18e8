#include "journal/journal.h"

#include "journal/record_codec.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>

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

Journal::Journal(int fd, std::uint64_t size, FsyncPolicy policy, std::uint64_t last_seq)
    : appended_(last_seq),
      synced_(last_seq),
      fsynced_(last_seq),
      fd_(fd),
      policy_(policy),
      file_size_(size) {
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
  if (policy() != FsyncPolicy::kAlways) return false;
  std::lock_guard lock(mu_);
  if (synced_ >= seq || stop_) return false;
  waiters_.push_back({seq, on, std::move(done)});
  return true;
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

bool Journal::WriteAll(int fd, const std::string& data) {
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n >= 0) {
      done += static_cast<std::size_t>(n);
      continue;
    }
    if (errno == EINTR) continue;
    const int err = errno;
    if (policy() == FsyncPolicy::kAlways) {
      // As Redis: a reply may already depend on this record; no way to keep the promise.
      spdlog::critical(
          "Can't recover from AOF write error when the AOF fsync policy is "
          "'always'. Exiting...");
      std::_Exit(1);
    }
    if (last_write_ok_.exchange(false)) {
      spdlog::warn("Error writing to the AOF file: {}", std::strerror(err));
    }
    std::this_thread::sleep_for(kRetryAfterError);
  }
  if (!last_write_ok_.exchange(true))
    spdlog::warn("AOF write error looks solved, Redis can write again.");
  return true;
}

void Journal::SyncFd(int fd) {
  if (::fdatasync(fd) != 0 && policy() == FsyncPolicy::kAlways) {
    spdlog::critical(
        "Can't persist AOF for fsync error when the AOF fsync policy is 'always': "
        "{}. Exiting...",
        std::strerror(errno));
    std::_Exit(1);
  }
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
  std::string batch;
  auto last_sync = steady_clock::now();
  std::uint64_t last_batch = 0;  // records in the last batch synced under always
  steady_clock::duration last_sync_took{};
  bool dirty = false;  // written since the last fdatasync
  std::unique_lock lock(mu_);
  for (;;) {
    while (buf_.empty() && next_fd_ < 0 && !stop_ && !sync_requested_) {
      writer_idle_ = true;
      if (dirty && policy() == FsyncPolicy::kEverysec) {
        if (cv_.wait_until(lock, last_sync + kEverysec) == std::cv_status::timeout) break;
      } else {
        cv_.wait(lock);
      }
    }
    writer_idle_ = false;
    if (policy() == FsyncPolicy::kAlways) GatherLocked(lock, last_batch, last_sync_took);
    batch.swap(buf_);
    buf_.clear();
    const std::uint64_t end = appended_;
    const int switch_fd = std::exchange(next_fd_, -1);
    const std::size_t split = switch_at_;
    const bool sync_requested = std::exchange(sync_requested_, false);
    const bool stopping = stop_;
    lock.unlock();

    if (switch_fd >= 0) {
      // The old file's tail, synced and closed before the new file gets a byte.
      WriteAll(fd_, batch.substr(0, split));
      SyncFd(fd_);
      ::close(fd_);
      fd_ = switch_fd;
      file_size_.store(next_size_, std::memory_order_relaxed);
      batch.erase(0, split);
    }
    if (!batch.empty()) {
      WriteAll(fd_, batch);
      file_size_.fetch_add(batch.size(), std::memory_order_relaxed);
      dirty = true;
    }
    const auto now = steady_clock::now();
    const FsyncPolicy policy = this->policy();
    bool synced = false;
    if (dirty && (policy == FsyncPolicy::kAlways || sync_requested || stopping ||
                  (policy == FsyncPolicy::kEverysec && now - last_sync >= kEverysec))) {
      SyncFd(fd_);
      last_sync_took = steady_clock::now() - now;
      last_batch = end - synced_;  // synced_ is the end of the batch before (this thread's)
      last_sync = now;
      dirty = false;
      synced = true;
    }
    unsynced_.store(dirty ? 1 : 0, std::memory_order_relaxed);
    batch.clear();
    if (batch.capacity() > (1u << 20)) batch.shrink_to_fit();
    const bool pace = policy != FsyncPolicy::kAlways && !stopping;

    lock.lock();
    synced_ = end;
    if (synced || !dirty) fsynced_ = end;
    std::vector<Waiter> ready;
    for (std::size_t i = 0; i < waiters_.size();) {
      if (waiters_[i].seq <= synced_ || stopping) {
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
    // everysec and no: records appended in the next kWriteEvery go out in one write(), and
    // their Append()s wake nobody (writer_idle_ stays false); Sync, a file switch and Close
    // end the pause.
    if (pace) {
      cv_.wait_for(lock, kWriteEvery, [&] { return stop_ || sync_requested_ || next_fd_ >= 0; });
    }
    if (stopping && buf_.empty() && next_fd_ < 0) return;
  }
}

}  // namespace latch::journal
