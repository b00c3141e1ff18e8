#pragma once
// The journal writer: group commit onto one append-only file.
//
// Any thread appends encoded records to a shared buffer under a short mutex and gets the
// record's sequence number (1, 2, ...). A connection that must not reply before its writes
// are on disk asks WhenDurable(seq, done, its io_context): at the end of its io thread's
// event-loop pass that thread takes the whole buffer, writes it with one write() and, under
// `appendfsync always`, one fdatasync(), then runs the pass's `done`s (journal_pass.cpp).
// When another thread is writing, the journal thread takes the batch next and posts the
// completions of one batch in one handler per io_context (one wakeup per worker, not per
// connection).
//
// Policies (Redis's appendfsync): always = synced before any reply that depends on it;
// everysec = written (to the kernel) before any reply that depends on it, fdatasync'd at most
// once a second: a kill -9 loses nothing acknowledged, a power loss about a second, as
// Redis, which write()s its AOF buffer before it sends the replies of an event-loop pass;
// no = written so, the kernel decides when to sync. Under everysec and no the io thread's
// end-of-pass write does it too, not the journal thread: handing the write to it would cost
// a thread switch per handful of records (measured 0.17 per request at c50 P16 against 0.01
// without a journal). The journal thread writes the rest (records of other threads, which
// wake it) and does the fdatasyncs.
//
// Ordering: a store operation appends its record while it holds its shard's lock, so the
// journal holds the records of one key in the order they happened.
//
// Write errors (a full disk, an unwritable file): a partial write is cut off again (as Redis
// does), the bytes stay buffered, the journal thread retries every 100 ms, and the error is
// published (`error_out`: the server then refuses writes with -MISCONF, as Redis). A reply
// never goes out before its records are written, whatever the policy: under everysec and no
// it waits for the retry as it would for a sync under always. Unlike Redis, a write error
// under always does not end the process: nothing was acknowledged, so it need not. A failed
// fdatasync under always still does (the kernel may have dropped the pages; a later sync
// could succeed without them), as in Redis.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace spdlog {
class logger;
}  // namespace spdlog

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace latch::journal {

enum class FsyncPolicy { kAlways, kEverysec, kNo };
// Options::appendfsync (0 always, 1 everysec, 2 no) as a policy.
FsyncPolicy PolicyOf(int appendfsync);

namespace detail {
// The sequence number of the last record this thread appended (0: none yet).
inline thread_local std::uint64_t t_last_seq = 0;
// An io thread whose replies wait through WhenDurable(..., on) and whose tick calls FlushSoon:
// its records are written at the end of its event-loop pass (FlushPass), so its appends wake
// nobody.
inline thread_local bool t_flushes_own = false;
}  // namespace detail
inline std::uint64_t ThisThreadLastSeq() { return detail::t_last_seq; }
// Called by each io thread at its start (net/worker.cpp): see detail::t_flushes_own.
inline void FlushesItsOwnRecords() { detail::t_flushes_own = true; }

class Journal {
 public:
  // Takes ownership of `fd` (open for appending; its current size is `size`). Sequence numbers
  // start after `last_seq`: a journal reopened at run time (CONFIG SET appendonly) continues
  // the numbers of the one before, so a number a connection still holds from the old journal
  // is never mistaken for a record the new one has not written yet.
  // `error_out` (may be null): set to the errno of the last failed write or fdatasync while it
  // stands, 0 once they work again. `before_write`, when set, runs before each write() of a
  // batch, holding no lock an appender takes (the server's journal-write stall point,
  // fault_injector.h).
  // Its warnings (a failed write or fdatasync, and when writes work again) go to `log`, the
  // server's logger, which must outlive it.
  // `may_sync_inline` (may be empty: always): false while the io threads must not write and
  // sync under `always` themselves (a test's journal-write stall, which must stop the journal
  // thread, not an io thread): FlushPass hands the batch to the journal thread then.
  Journal(spdlog::logger& log, int fd, std::uint64_t size, FsyncPolicy policy,
          std::uint64_t last_seq = 0, std::atomic<int>* error_out = nullptr,
          std::function<void()> before_write = {}, std::function<bool()> may_sync_inline = {});
  // Close().
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  // Appends what encode(std::string*) appends (whole records) and returns their sequence
  // number. Thread-safe; callers hold the shard lock of the key the record describes.
  template <class Encode>
  std::uint64_t Append(Encode&& encode) {
    std::uint64_t seq;
    bool wake;
    const bool own = detail::t_flushes_own;
    {
      std::lock_guard lock(mu_);
      encode(&buf_);
      seq = ++appended_;
      // An io thread writes its records itself at the end of its pass (FlushPass): waking
      // the journal thread for them cost a thread switch per batch (issue 26).
      wanted_ = wanted_ || !own;
      wake = (writer_idle_ && !own) || (gathering_ && seq == gather_until_);
      if (wake) writer_idle_ = false;
    }
    if (wake) cv_.notify_one();
    detail::t_last_seq = seq;
    return seq;
  }

  // As Append, for records of database `db`: a `SELECT db` record goes first when the record
  // before (in file order) was of another database, as Redis's AOF does. Every journal file
  // starts in database 0, as the loader does, so a journal of DB 0 alone has no SELECT.
  template <class Encode>
  std::uint64_t Append(int db, Encode&& encode) {
    return Append([&](std::string* out) {
      if (db != selected_db_) {
        AppendSelect(out, db);
        selected_db_ = db;
      }
      encode(out);
    });
  }

  // True when the records up to `seq` are not durable yet: under `always` synced, under the
  // other policies written. `done` then runs once they are (or when the journal closes).
  // With `on` (the caller's io_context, called on its thread): at the end of the caller's
  // event-loop pass, FlushPass on that thread writes every record buffered so far (and under
  // `always` fdatasyncs it, unless another thread is writing: then the journal thread does,
  // and `done` is posted to `on`), then runs the pass's `done`s there, without a hand-off.
  // Without `on`: under everysec/no this call writes them itself (WriteOut), under always the
  // journal thread syncs them and runs `done` on its thread.
  // False (and `done` is never called) when they already are.
  bool WhenDurable(std::uint64_t seq, std::function<void()> done,
                   boost::asio::io_context* on = nullptr);
  // An io thread's tick: records it appended that no reply waits for (active expiry's
  // deletions) are written by a FlushPass on `on` soon, as if a reply waited for them.
  void FlushSoon(boost::asio::io_context& on);
  // Writes and syncs everything appended so far; returns when it is on disk.
  void Sync();
  // Writes and syncs what is buffered, runs every pending completion, joins the thread and
  // closes the file. Idempotent. The object stays valid for WhenDurable (which then answers
  // false) so that a connection holding a pointer to it may still ask; nothing may Append.
  void Close();
  // From the next record on, records go to `fd` (rewrite: the new incremental file). What was
  // appended before goes to the old file, which is synced and closed. `size` as above.
  void SwitchFile(int fd, std::uint64_t size);

  void set_policy(FsyncPolicy p) { policy_.store(p, std::memory_order_relaxed); }
  FsyncPolicy policy() const { return policy_.load(std::memory_order_relaxed); }
  std::uint64_t appended() const;
  // Bytes written to the current file (its size), for INFO aof_current_size and the
  // automatic rewrite.
  std::uint64_t file_size() const { return file_size_.load(std::memory_order_relaxed); }
  bool last_write_ok() const { return last_write_ok_.load(std::memory_order_relaxed); }
  // Bytes appended and not written yet (INFO aof_buffer_length).
  std::size_t buffered_bytes() const;
  std::uint64_t pending_fsyncs() const { return unsynced_.load(std::memory_order_relaxed); }

 private:
  spdlog::logger& log_;
  static void AppendSelect(std::string* out, int db);
  struct Waiter {
    std::uint64_t seq;
    boost::asio::io_context* on;
    std::function<void()> done;
    bool synced;  // waits for the fdatasync (always), else for the write
  };
  void Run();
  // journal_pass.cpp: WhenDurable with an io_context, and the end-of-pass flush it posts.
  bool DeferToPass(std::uint64_t seq, std::function<void()> done, boost::asio::io_context& on,
                   bool always);
  void PostFlushLocked(boost::asio::io_context& on);
  // `looks`: how many times this pass's flush has let the event loop read once more (below).
  void FlushPass(boost::asio::io_context& on, int looks = 0);
  // Under `lock` (mu_) and write_mu_: fdatasyncs what is written (without mu_) and counts it
  // synced. Called by FlushPass under always.
  void SyncInline(std::unique_lock<std::mutex>& lock);
  // Under mu_: the waiters `reached` allows; those of `on` into *own (run by the caller on
  // its thread), the others into *posted (Release), except those of an io_context whose own
  // FlushPass is posted (it releases them without a post).
  void TakeReady(boost::asio::io_context& on, std::vector<Waiter>* own,
                 std::vector<Waiter>* posted);
  // Under mu_: leaves the batch to the journal thread (a write in progress elsewhere, a file
  // switch, a failed write, a test's stall).
  void HandToWriterLocked();
  bool MaySyncInline() const { return !may_sync_inline_ || may_sync_inline_(); }
  // Under always, a pass with more records than this leaves the sync to the journal thread
  // (journal_pass.cpp, FlushPass).
  static constexpr std::uint64_t kInlineSyncAtMost = 128;
  // Under always, a pass with fewer records than the last inline sync carried lets the loop
  // poll and read what arrived meanwhile, up to this many times, before it syncs.
  static constexpr int kGatherLooks = 2;
  // everysec and no: write()s everything buffered if record `seq` is not written yet. False
  // when it is not written (writes are failing: the journal thread retries them).
  bool WriteOut(std::uint64_t seq);
  // Takes what is buffered (with a pending file switch) and writes it. Called holding
  // write_mu_ and `lock` (mu_), which it releases around the write()s; returns the number
  // of the last record it took. Sets dirty_ when it wrote; *was_clean: it was not set before.
  // On a write error the unwritten rest goes back in front of the buffer (with the file
  // switch, if it did not happen) and it returns at once, written_ short of the number it
  // returns: nobody sleeps holding write_mu_.
  // `closing`: the error is final, the rest is dropped (Close on a full disk).
  std::uint64_t TakeAndWrite(std::unique_lock<std::mutex>& lock, bool* was_clean,
                             bool closing = false);
  // Under mu_: the unwritten bytes of batch_ from `done` back into buf_ (TakeAndWrite).
  void PutBack(std::size_t done, int switch_fd, std::size_t split, std::uint64_t switch_size);
  void ReleaseReady(std::unique_lock<std::mutex>& lock, bool stopping);
  // Runs the completions of a synced batch: one posted handler per io_context.
  static void Release(std::vector<Waiter>& ready);
  // Under always, before taking a batch: waits briefly for the clients just answered (.cpp).
  void GatherLocked(std::unique_lock<std::mutex>& lock, std::uint64_t last_batch,
                    std::chrono::steady_clock::duration last_sync_took);
  // Writes `data` at the end of fd_ (retrying short writes and EINTR) and counts it in
  // file_size_. On an error, cuts a partial write off again (ftruncate) and reports it;
  // returns the bytes that are in the file (data.size() on success).
  std::size_t WriteAll(std::string_view data);
  void WriteFailed(int err);
  void SyncFd(int fd);
  void PublishError();

  // Serialises taking a batch and writing it, between the journal thread and io threads
  // (WriteOut), so that batches reach the file in the order they were taken. Lock order:
  // write_mu_, then mu_. Never held across an fdatasync.
  std::mutex write_mu_;
  std::string batch_;  // the batch being written; under write_mu_
  mutable std::mutex mu_;
  std::condition_variable cv_;          // the journal thread waits for work
  std::condition_variable synced_cv_;   // Sync() waits for the thread
  std::string buf_;                     // the filling batch
  std::uint64_t appended_ = 0;          // records appended so far
  std::atomic<std::uint64_t> written_;  // records written to the file (write_mu_ and mu_)
  std::uint64_t synced_ = 0;            // records written and (under always) synced
  std::uint64_t fsynced_ = 0;           // records covered by the last fdatasync
  bool writer_idle_ = false;
  // Records in buf_ that no io thread's FlushPass will write (appended by another thread, a
  // failed write, a batch handed over): the journal thread's work. Under mu_.
  bool wanted_ = false;
  std::uint64_t last_inline_batch_ = 0;  // records of the last SyncInline; under mu_
  // The io_contexts with a FlushPass posted and not run yet. Under mu_.
  std::vector<boost::asio::io_context*> flush_posted_;
  int selected_db_ = 0;     // the database of the last record; under mu_
  bool gathering_ = false;  // GatherLocked waits: Append wakes it at gather_until_
  std::uint64_t gather_until_ = 0;
  bool stop_ = false;
  bool sync_requested_ = false;
  std::vector<Waiter> waiters_;
  // A pending SwitchFile: bytes of buf_ that still belong to the old file.
  int next_fd_ = -1;
  std::uint64_t next_size_ = 0;
  std::size_t switch_at_ = 0;

  int fd_;
  const std::function<void()> before_write_;
  const std::function<bool()> may_sync_inline_;
  std::atomic<FsyncPolicy> policy_;
  std::atomic<std::uint64_t> file_size_;
  std::atomic<bool> last_write_ok_{true};
  std::atomic<int> write_errno_{0}, fsync_errno_{0};
  std::atomic<int>* error_out_;
  std::atomic<std::size_t> in_flight_{0};  // bytes of batch_ being written
  std::atomic<std::uint64_t> unsynced_{0};
  std::atomic<bool> dirty_{false};  // written since the last fdatasync
  std::thread thread_;
};

}  // namespace latch::journal
