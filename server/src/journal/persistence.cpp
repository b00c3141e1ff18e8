#include "journal/persistence.h"

#include <spdlog/logger.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>

#include "fault_injector.h"
#include "journal/container_records.h"
#include "journal/loader.h"
#include "journal/record_codec.h"
#include "key_event_router.h"
#include "latch/protocol/info_line.h"
#include "store/keyspace_set.h"
#include "store/lock_table.h"
#include "store/object.h"
#include "store/shard_guard.h"

namespace latch::journal {
namespace {
constexpr auto kMaintainEvery = std::chrono::milliseconds(100);
}  // namespace

FsyncPolicy PolicyOf(int appendfsync) {
  switch (appendfsync) {
    case 0:
      return FsyncPolicy::kAlways;
    case 2:
      return FsyncPolicy::kNo;
    default:
      return FsyncPolicy::kEverysec;
  }
}

Persistence::Persistence(PersistenceParts parts) : parts_(std::move(parts)) {}

Persistence::~Persistence() { Stop(); }

void Persistence::Start() {
  try {
    StartJournal();
  } catch (const std::exception& e) {
    parts_.log.critical("{}", e.what());  // Redis's words (loader.cpp); the server stops
    throw;
  }
}

void Persistence::StartJournal() {
  std::lock_guard toggle(toggle_mu_);
  Options o;
  {
    std::lock_guard lock(parts_.options_mu);
    o = parts_.options;
  }
  start_appendonly_ = o.appendonly;
  start_dir_ = o.dir;
  {
    std::lock_guard lock(parts_.options_mu);
    parts_.options.dir.clear();  // CONFIG GET dir shows the working directory anyway
  }
  if (o.appendonly && !journal_) {
    SetPaths(o);
    EnsureDirectory(paths_.dir);
    ::unlink(paths_.TempRewrite().c_str());  // a rewrite the last run did not finish
    std::optional<Manifest> found = ReadManifest(paths_.Manifest());
    if (!found) {
      OpenNew();
    } else {
      manifest_ = *found;
      const auto started = std::chrono::steady_clock::now();
      const Databases dbs{parts_.dbs,
                          [this](int db) -> store::Keyspace& { return parts_.database(db); }};
      const LoadResult r = LoadJournal(paths_, manifest_, dbs, parts_.locks.tokens(),
                                       parts_.clock.Now(), o.aof_load_truncated, parts_.log);
      const std::chrono::duration<double> took = std::chrono::steady_clock::now() - started;
      parts_.log.info("DB loaded from append only file: {:.3f} seconds ({} records)", took.count(),
                      r.records);
      base_size_ = r.base_size;
      rewrite_base_size_ = r.total_size;
      if (manifest_.incrs.empty()) {
        manifest_.incrs.push_back({paths_.IncrName(1), 1, 'i'});
        WriteManifest(paths_, manifest_);
      }
    }
    std::uint64_t size = 0;
    const int fd = OpenForAppend(paths_.Path(manifest_.incrs.back().name), &size);
    std::uint64_t earlier = 0;
    for (std::size_t i = 0; i + 1 < manifest_.incrs.size(); ++i) {
      earlier += FileSize(paths_.Path(manifest_.incrs[i].name));
    }
    incr_sizes_ = earlier;
    Open(fd, size, o);
  }
  StartTokenFloor(o);
}

void Persistence::StartTokenFloor(const Options& o) {
  if (floor_ || (!o.appendonly && o.lock_restart_delay <= 0)) return;
  auto floor = std::make_unique<TokenFloor>(
      parts_.locks.tokens(), TokenFloorPath(), [this] { return parts_.clock.Now().wall_us; },
      parts_.log);
  floor->Start();
  floor_ = std::move(floor);
  floor_live_.store(floor_.get(), std::memory_order_release);
}

std::string Persistence::TokenFloorPath() const {
  const std::string name(kTokenFloorFile);
  return start_dir_.empty() ? name : start_dir_ + "/" + name;
}

// dir is the working directory (latchd chdirs there at start, as Redis); empty = the current
// one, as for an embedded server.
void Persistence::SetPaths(const Options& o) {
  appenddirname_ = o.appenddirname;
  paths_.dir = start_dir_.empty() ? o.appenddirname : start_dir_ + "/" + o.appenddirname;
  paths_.prefix = o.appendfilename;
  timestamps_ = o.aof_timestamp_enabled;
  last_ts_ = 0;
}

void Persistence::Open(int fd, std::uint64_t size, const Options& o) {
  // The journal-write stall point (test mode, TEST.FAULT STALL): a slow disk, on purpose.
  auto before_write = [&faults = parts_.faults] {
    if (faults.stalls_armed()) faults.AtStallPoint(testing::StallPoint::kJournalWrite, {});
  };
  // While a stall is armed the journal thread does every write under always, so that a
  // stalled write stops it and not an io thread (a test's observer runs on one).
  auto may_sync_inline = [&faults = parts_.faults] { return !faults.stalls_armed(); };
  journal_ = std::make_unique<Journal>(parts_.log, fd, size, PolicyOf(o.appendfsync), last_seq_,
                                       &parts_.write_errno, std::move(before_write),
                                       std::move(may_sync_inline));
  live_.store(journal_.get(), std::memory_order_release);
  Attach(true);
  stop_ = false;
  thread_ = std::thread([this] { Maintain(); });
}

void Persistence::OpenNew() {
  manifest_ = Manifest{};
  manifest_.base = AofFile{paths_.BaseName(1), 1, 'b'};
  manifest_.incrs.push_back({paths_.IncrName(1), 1, 'i'});
  std::uint64_t size = 0;
  ::close(OpenForAppend(paths_.Path(manifest_.base->name), &size));
  parts_.log.info("Creating AOF base file {} on server start", manifest_.base->name);
  parts_.log.info("Creating AOF incr file {} on server start", manifest_.incrs.back().name);
  WriteManifest(paths_, manifest_);
}

void Persistence::Stop() {
  std::lock_guard toggle(toggle_mu_);
  CloseJournal();  // the token floor runs on: a start() after stop() continues with it
}

void Persistence::CloseJournal() {
  abort_rewrite_ = true;  // a rewrite under way stops at its next shard (rewrite.cpp)
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  abort_rewrite_ = false;
  if (!journal_) return;
  Attach(false);  // no record is appended from here on
  live_.store(nullptr, std::memory_order_release);
  journal_->Close();            // writes, syncs, releases the replies waiting for it, closes
  parts_.write_errno.store(0);  // no journal, no -MISCONF (Redis: aof_state off)
  last_seq_ = journal_->appended();
  retired_.push_back(std::move(journal_));
}

void Persistence::Timestamp(std::string* out, const TimeSnapshot& now) {
  const std::int64_t s = now.wall_ms / 1000;
  if (last_ts_.exchange(s, std::memory_order_relaxed) != s) EncodeTimestamp(out, s);
}

void Persistence::KeyModified(int db, const store::Object& o, const TimeSnapshot& now) {
  Journal* j = journal();
  if (j == nullptr) return;
  if (parts_.faults.stalls_armed()) {
    parts_.faults.AtStallPoint(testing::StallPoint::kJournalAppend, o.key());
  }
  std::int64_t deadline = 0;
  if (o.has_expire()) deadline = std::max<std::int64_t>(1, now.MonoToWall(o.expire_at()));
  j->Append(db, [&](std::string* out) {
    if (timestamps_.load(std::memory_order_relaxed)) Timestamp(out, now);
    if (o.is_container()) {
      EncodeContainer(out, o, deadline);
    } else if (const std::uint64_t token = o.token(); token != 0) {
      EncodeLock(out, o.key(), o.value(), token, deadline);
    } else {
      EncodeSet(out, o.key(), o.value(), deadline);
    }
  });
}

void Persistence::KeyGone(int db, std::string_view key) {
  if (Journal* j = journal()) j->Append(db, [&](std::string* out) { EncodeDel(out, key); });
}

// The shard's index within its database: a flush record means the same shard whichever
// database was created first.
void Persistence::ShardCleared(const store::Shard& shard) {
  Journal* j = journal();
  if (j == nullptr) return;
  const int count = parts_.dbs.shards_per_db();
  j->Append(parts_.dbs.DbOf(shard),
            [&](std::string* out) { EncodeFlushShard(out, shard.index() % count, count); });
}

void Persistence::DatabasesSwapped(int a, int b) {
  if (Journal* j = journal()) j->Append([&](std::string* out) { EncodeSwapDb(out, a, b); });
}

void Persistence::OnModified(store::Shard& shard, const store::KeyEvent& e) {
  KeyModified(parts_.dbs.DbOf(shard), *e.object, parts_.clock.NowSameWallOffset());
}

store::Object* Persistence::OnGone(store::Shard& shard, const store::KeyEvent& e) {
  KeyGone(parts_.dbs.DbOf(shard), e.key);
  return nullptr;
}

// The router reads its journal slot under a shard lock (the workers' active expiry runs while
// the journal loads), so it is switched with every shard held, in the lock order. CONFIG SET
// appendonly inside EXEC runs with every shard already held by this thread.
void Persistence::Attach(bool on) {
  // Every database that exists; one created meanwhile reads the slot under its own shard
  // lock after this store, as every later event does.
  std::vector<store::Shard*> took;
  const int n = parts_.dbs.created() * parts_.dbs.shards_per_db();
  for (int i = 0; i < n; ++i) {
    store::Shard& s = *parts_.dbs.ShardAt(i);
    if (store::ThisThreadHolds(s)) continue;
    store::LockShard(s, nullptr);
    took.push_back(&s);
  }
  parts_.key_events.set_journal(on ? this : nullptr);
  for (auto it = took.rbegin(); it != took.rend(); ++it) store::UnlockShard(**it);
}

std::string Persistence::RequestRewrite() {
  if (journal() == nullptr) {
    return "-ERR the journal is off: set appendonly yes in the configuration";
  }
  {
    std::lock_guard lock(mu_);
    if (rewrite_requested_ || rewrite_in_progress_.load()) {
      return "-ERR Background append only file rewriting already in progress";
    }
    rewrite_requested_ = true;
    // Shown from the reply on, as Redis's fork is (until Maintain's rewrite ends): a client
    // that polls INFO for aof_rewrite_in_progress:0 after the reply could otherwise see the
    // rewrite as done before it began (RuntimeConfigTest.ConfigSetDirMoves..., 4 runs in a
    // row on a loaded machine).
    rewrite_in_progress_ = true;
  }
  cv_.notify_all();
  return "+Background append only file rewriting started";
}

bool Persistence::WantsAutoRewrite() const {
  int percentage;
  std::int64_t min_size;
  {
    std::lock_guard lock(parts_.options_mu);
    percentage = parts_.options.auto_aof_rewrite_percentage;
    min_size = parts_.options.auto_aof_rewrite_min_size;
  }
  if (percentage <= 0) return false;
  const std::uint64_t current = base_size_ + incr_sizes_ + journal_->file_size();
  if (current < static_cast<std::uint64_t>(min_size)) return false;
  const std::uint64_t base = std::max<std::uint64_t>(1, rewrite_base_size_.load());
  return current > base && (current - base) * 100 / base >= static_cast<std::uint64_t>(percentage);
}

void Persistence::Maintain() {
  std::unique_lock lock(mu_);
  while (!stop_) {
    cv_.wait_for(lock, kMaintainEvery, [&] { return stop_ || rewrite_requested_; });
    if (stop_) break;
    const bool requested = std::exchange(rewrite_requested_, false);
    lock.unlock();
    int appendfsync;
    bool timestamps;
    {
      std::lock_guard olock(parts_.options_mu);
      appendfsync = parts_.options.appendfsync;
      timestamps = parts_.options.aof_timestamp_enabled;
    }
    journal_->set_policy(PolicyOf(appendfsync));  // CONFIG SET (also applied by ApplyConfig)
    timestamps_ = timestamps;
    if (requested || WantsAutoRewrite()) {
      if (!requested) parts_.log.info("Starting automatic rewriting of AOF on growth");
      rewrite_in_progress_ = true;
      const auto started = std::chrono::steady_clock::now();
      try {
        Rewrite();
        last_rewrite_ok_ = true;
        ++rewrites_;
      } catch (const std::exception& e) {
        parts_.log.warn("Background AOF rewrite failed: {}", e.what());
        ::unlink(paths_.TempRewrite().c_str());
        last_rewrite_ok_ = false;
      }
      last_rewrite_ms_ = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::steady_clock::now() - started)
                             .count();
      rewrite_in_progress_ = false;
    }
    lock.lock();
  }
}

void Persistence::AppendInfo(std::string* s) const {
  auto line = [s](std::string_view k, std::int64_t v) { protocol::AppendInfoLine(s, k, v); };
  auto status = [s](std::string_view k, bool ok) {
    s->append(k);
    s->append(ok ? ":ok\r\n" : ":err\r\n");
  };
  Journal* j = journal();
  line("loading", parts_.loading.load() ? 1 : 0);
  line("async_loading", 0);
  line("rdb_changes_since_last_save", 0);
  line("rdb_bgsave_in_progress", 0);
  status("rdb_last_bgsave_status", true);
  line("aof_enabled", j != nullptr ? 1 : 0);
  line("aof_rewrite_in_progress", rewrite_in_progress_.load() ? 1 : 0);
  line("aof_rewrite_scheduled", 0);
  line("aof_last_rewrite_time_sec",
       last_rewrite_ms_.load() < 0 ? -1 : last_rewrite_ms_.load() / 1000);
  line("aof_current_rewrite_time_sec", -1);
  status("aof_last_bgrewrite_status", last_rewrite_ok_.load());
  line("aof_rewrites", static_cast<std::int64_t>(rewrites_.load()));
  status("aof_last_write_status", j == nullptr || j->last_write_ok());
  if (j != nullptr) {
    line("aof_current_size",
         static_cast<std::int64_t>(base_size_.load() + incr_sizes_.load() + j->file_size()));
    line("aof_base_size", static_cast<std::int64_t>(base_size_.load()));
    line("aof_pending_rewrite", 0);
    line("aof_buffer_length", static_cast<std::int64_t>(j->buffered_bytes()));
    line("aof_pending_bio_fsync", static_cast<std::int64_t>(j->pending_fsyncs()));
    line("aof_delayed_fsync", 0);
  }
  if (const TokenFloor* floor = token_floor()) floor->AppendInfo(s);
}

}  // namespace latch::journal
