#pragma once
// The journal's life in the server: loading at start, the key-event hook that appends a record
// for every change to a key, background rewrites (BGREWRITEAOF and auto-aof-rewrite-*), and
// INFO's "# Persistence" section.
//
// What is logged: the resulting state of the key a store operation changed (record_codec.h),
// read from the object under the shard lock, never the command. So a new command cannot skip
// the journal, and replay is idempotent, which is what lets a rewrite snapshot the live
// keyspace shard by shard while writes go on (rewrite.cpp says why that is exact).
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "journal/aof_files.h"
#include "journal/journal.h"
#include "journal/token_floor.h"
#include "latch/clock.h"
#include "latch/options.h"
#include "store/key_events.h"

namespace spdlog {
class logger;
}  // namespace spdlog

namespace latch {
class KeyEventRouter;
namespace testing {
class FaultInjector;
}  // namespace testing
namespace store {
class Object;
class Keyspace;
class KeyspaceSet;
class LockTables;
}  // namespace store
}  // namespace latch

namespace latch::journal {

// What the journal uses of the server, handed in by ServerState's constructor (so that
// journal/ includes nothing above the services). Every reference outlives the Persistence.
struct PersistenceParts {
  std::mutex& options_mu;  // guards `options`
  // Read under options_mu; Start() clears dir, a failed CONFIG SET appendonly resets it.
  Options& options;
  spdlog::logger& log;
  const Clock& clock;
  store::KeyspaceSet& dbs;
  std::function<store::Keyspace&(int db)> database;  // ServerState::Database: made on first use
  store::LockTables& locks;                          // the fencing tokens
  KeyEventRouter& key_events;                        // the journal slot (Attach)
  testing::FaultInjector& faults;                    // the journal's stall points
  std::atomic<int>& write_errno;                     // ServerState::journal_write_errno (-MISCONF)
  const std::atomic<bool>& loading;                  // ServerState::loading
};

class Persistence final : public store::KeyEvents {
 public:
  explicit Persistence(PersistenceParts parts);
  ~Persistence();
  Persistence(const Persistence&) = delete;
  Persistence& operator=(const Persistence&) = delete;

  // At start-up, while clients get -LOADING: replays the journal (appendonly yes), opens it
  // for appending and starts the background thread; then starts the fencing-token floor
  // (lock-restart-delay itself is armed earlier, by ServerImpl::StartServing). Throws
  // LoadError (loader.h) or std::runtime_error when the server must not start.
  void Start();
  // After the workers stopped: writes and syncs what is buffered and closes the files.
  void Stop();

  // After CONFIG SET (toggle.cpp): applies appendfsync and aof-timestamp-enabled at once, and
  // turns the journal on (a new incremental file at once, a base written from the live keyspace
  // in the background, as Redis's rewrite on turning AOF on) or off (synced and closed) to
  // match options.appendonly. Returns the CONFIG SET error text (without "-") when it cannot,
  // and then sets appendonly back to what it was.
  std::optional<std::string> ApplyConfig();

  // The journal, or nullptr while appendonly is off. Safe from any thread.
  Journal* journal() const { return live_.load(std::memory_order_acquire); }

  // The key-event hook, called under the key's shard lock. `now` converts the monotonic
  // deadline into the absolute one the record carries.
  // `db`: the key's database (a SELECT record precedes it when the last record's differs).
  void KeyModified(int db, const store::Object& o, const TimeSnapshot& now);
  void KeyGone(int db, std::string_view key);
  void ShardCleared(const store::Shard& shard);
  // SWAPDB a b, called holding every shard of both databases.
  void DatabasesSwapped(int a, int b);

  // store::KeyEvents, attached to the server's KeyEventRouter while the journal is open: the
  // router reports a removal here before a lock waiter is handed the key.
  void OnModified(store::Shard& shard, const store::KeyEvent& e) override;
  store::Object* OnGone(store::Shard& shard, const store::KeyEvent& e) override;
  void OnCleared(store::Shard& shard) override { ShardCleared(shard); }

  // The fencing-token floor (token_floor.h), once the journal or lock-restart-delay asked for
  // it; null before.
  const TokenFloor* token_floor() const { return floor_live_.load(std::memory_order_acquire); }

  // BGREWRITEAOF: the reply line ("+..." or "-ERR ...").
  std::string RequestRewrite();
  // INFO's "# Persistence" lines (without the header).
  void AppendInfo(std::string* s) const;

 private:
  void StartJournal();
  // Starts the token floor when the options ask for it and it is not running yet. Throws
  // std::runtime_error (token_floor.h).
  void StartTokenFloor(const Options& o);
  std::string TokenFloorPath() const;
  void SetPaths(const Options& o);
  void OpenNew();  // first start: empty base + first incremental file + manifest
  // The journal on `fd` (the last incremental file), attached, with its background thread.
  void Open(int fd, std::uint64_t size, const Options& o);
  std::optional<std::string> ApplyAppendonly();  // toggle.cpp, under toggle_mu_
  std::string Enable();                          // toggle.cpp; "" or the reason it failed
  // CONFIG SET dir (toggle.cpp): chdir to options.dir when a CONFIG SET put one there.
  std::optional<std::string> ApplyDir();
  void CloseJournal();   // stops the thread, detaches, syncs and closes; retires the journal
  void Attach(bool on);  // the journal slot of the server's key-event router
  void Maintain();  // background thread: fsync policy changes, automatic and requested rewrites
  bool WantsAutoRewrite() const;
  void Rewrite();  // rewrite.cpp
  // Writes the keyspace as records into `fd`, shard by shard; returns the bytes written.
  // Fails when a SWAPDB ran since the swap count was `swaps`.
  std::uint64_t WriteSnapshot(int fd, std::uint64_t swaps);
  void Timestamp(std::string* out, const TimeSnapshot& now);

  PersistenceParts parts_;
  AofPaths paths_;
  // options.dir as Start() found it (an embedded server's journal directory; latchd's main()
  // has chdir'd there and cleared it): from then on options.dir is non-empty only when a
  // CONFIG SET asks for a chdir, and after one the journal's paths are relative to the new
  // working directory, as Redis's.
  std::string start_dir_;
  std::string appenddirname_;
  std::atomic<bool> dir_moved_{false};   // Rewrite() takes the new directory (paths_) first
  Manifest manifest_;                    // the background thread's, once started
  std::atomic<bool> timestamps_{false};  // aof-timestamp-enabled, followed by Maintain
  std::unique_ptr<Journal> journal_;
  std::unique_ptr<TokenFloor> floor_;  // under toggle_mu_
  std::atomic<TokenFloor*> floor_live_{nullptr};
  // Journals closed by CONFIG SET appendonly no: a connection may still hold a pointer to one
  // (journal() is read without a lock), so they live as long as this object, closed.
  std::vector<std::unique_ptr<Journal>> retired_;
  std::uint64_t last_seq_ = 0;                 // the last sequence number of the retired journals
  std::mutex toggle_mu_;                       // Start, Stop and ApplyConfig, one at a time
  std::atomic<bool> start_appendonly_{false};  // appendonly as Start() found it
  std::atomic<bool> abort_rewrite_{false};
  std::atomic<Journal*> live_{nullptr};
  std::atomic<std::int64_t> last_ts_{0};

  // INFO and the automatic rewrite.
  std::atomic<std::uint64_t> base_size_{0};   // bytes of the base file
  std::atomic<std::uint64_t> incr_sizes_{0};  // bytes of incremental files before the current
  std::atomic<std::uint64_t> rewrite_base_size_{0};  // aof_current_size after the last rewrite
  std::atomic<bool> rewrite_in_progress_{false};
  std::atomic<bool> last_rewrite_ok_{true};
  std::atomic<std::int64_t> last_rewrite_ms_{-1};
  std::atomic<std::uint64_t> rewrites_{0};

  std::mutex mu_;
  std::condition_variable cv_;
  bool rewrite_requested_ = false;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace latch::journal
