// CONFIG SET appendonly yes|no at run time, as Redis 7.0 does it.
//
// yes: before the +OK, a manifest naming only a new, empty incremental file replaces any on
// disk, and the journal starts on that file: every change acknowledged from then on is in the
// journal, under appendfsync always on disk before its reply. The files of an earlier journal
// are deleted (they describe the keyspace of when it was turned off, which writes made since
// have overtaken). Then a rewrite (rewrite.cpp) writes a base from the live keyspace in the
// background, as Redis's turning AOF on does; until it is done a crash keeps what was written
// after the +OK (the keyspace from before was never durable), INFO shows aof_enabled:1 and
// aof_rewrite_in_progress:1, and BGREWRITEAOF answers that a rewrite is in progress.
//
// no: the journal is synced and closed (replies waiting for it are released); a base being
// written is abandoned. The files stay on disk, as Redis leaves them.
#include <spdlog/logger.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "journal/persistence.h"
#include "journal/record_codec.h"
#include "journal/server_hooks.h"
#include "store/lock_table.h"

namespace latch::journal {

std::optional<std::string> Persistence::ApplyConfig() {
  // While loading, Start() holds toggle_mu_: a CONFIG SET then must not wait for the load.
  // Redis refuses appendonly meanwhile (DENY_LOADING_CONFIG) with its -LOADING reply; the
  // other directives are read by the journal once it is open.
  // dir likewise (the loader reads the journal by paths relative to the working directory).
  if (parts_.loading.load()) {
    std::lock_guard lock(parts_.options_mu);
    const bool dir = !std::exchange(parts_.options.dir, std::string()).empty();
    if (parts_.options.appendonly == start_appendonly_ && !dir) return std::nullopt;
    parts_.options.appendonly = start_appendonly_;
    return std::string(kLoadingError);
  }
  std::lock_guard toggle(toggle_mu_);
  std::optional<std::string> refused = ApplyDir();
  if (!refused) refused = ApplyAppendonly();
  // CONFIG SET appendonly yes or lock-restart-delay: from now on tokens are reserved too, so
  // that they survive the restart the setting is for (token_floor.h).
  if (!floor_) {
    Options o;
    {
      std::lock_guard lock(parts_.options_mu);
      o = parts_.options;
    }
    try {
      StartTokenFloor(o);
    } catch (const std::exception& e) {
      parts_.log.warn("{}", e.what());
    }
  }
  return refused;
}

std::optional<std::string> Persistence::ApplyAppendonly() {
  bool want;
  {
    std::lock_guard lock(parts_.options_mu);
    want = parts_.options.appendonly;
    // A reply after CONFIG SET appendfsync always's +OK already waits for the disk.
    if (journal_) journal_->set_policy(PolicyOf(parts_.options.appendfsync));
    timestamps_ = parts_.options.aof_timestamp_enabled;
  }
  if (want == (journal_ != nullptr)) return std::nullopt;
  if (!want) {
    CloseJournal();
    parts_.log.info("AOF turned off (CONFIG SET appendonly no)");
    return std::nullopt;
  }
  const std::string reason = Enable();
  if (reason.empty()) return std::nullopt;
  std::lock_guard lock(parts_.options_mu);
  parts_.options.appendonly = false;
  return "ERR CONFIG SET failed (possibly related to argument 'appendonly') - " + reason;
}

// CONFIG SET dir, as Redis 7.0: a chdir, nothing more. Redis's journal paths are relative to
// the working directory, so the open incremental file goes on taking records where it is (its
// fd is open), and the next rewrite (BGREWRITEAOF, the automatic one, appendonly yes) writes a
// manifest, a base and an incremental file into <new dir>/<appenddirname> (created then, as
// Redis's rewrite does) and from then on the journal lives there; the old directory keeps its
// files. A failed rewrite (the new directory not writable) leaves the journal where it was
// and INFO says aof_last_bgrewrite_status:err. Before that rewrite, a restart with the new dir
// finds no journal there, as Redis's does.
std::optional<std::string> Persistence::ApplyDir() {
  std::string dir;
  {
    std::lock_guard lock(parts_.options_mu);
    dir = std::exchange(parts_.options.dir, std::string());
  }
  if (dir.empty()) return std::nullopt;
  if (::chdir(dir.c_str()) != 0) {
    return "ERR CONFIG SET failed (possibly related to argument 'dir') - " +
           std::string(std::strerror(errno));
  }
  start_dir_.clear();  // an embedded server's journal directory: relative from now on too
  dir_moved_ = true;
  if (floor_) floor_->Move(TokenFloorPath());  // written in the new directory at once
  parts_.log.info("Working directory changed to {} (CONFIG SET dir)", dir);
  return std::nullopt;
}

std::string Persistence::Enable() {
  Options o;
  {
    std::lock_guard lock(parts_.options_mu);
    o = parts_.options;
  }
  int fd = -1;
  Manifest fresh;
  try {
    SetPaths(o);
    EnsureDirectory(paths_.dir);
    ::unlink(paths_.TempRewrite().c_str());
    const Manifest old = ReadManifest(paths_.Manifest()).value_or(Manifest{});
    const std::int64_t seq = old.last_incr_seq() + 1;  // never a name the old manifest used
    fresh.incrs.push_back({paths_.IncrName(seq), seq, 'i'});
    std::uint64_t size = 0;
    fd = OpenForAppend(paths_.Path(fresh.incrs.back().name), &size);
    // The fencing counter first: it must continue above the tokens granted so far even if the
    // server crashes before the base (which also carries it) is written.
    std::string fence;
    EncodeFence(&fence, parts_.locks.tokens().last());
    if (::ftruncate(fd, 0) != 0 ||
        ::write(fd, fence.data(), fence.size()) != static_cast<ssize_t>(fence.size()) ||
        ::fdatasync(fd) != 0) {
      throw std::runtime_error("can't write " + fresh.incrs.back().name);
    }
    WriteManifest(paths_, fresh);
    if (old.base) ::unlink(paths_.Path(old.base->name).c_str());
    for (const AofFile& f : old.incrs) ::unlink(paths_.Path(f.name).c_str());
  } catch (const std::exception& e) {
    if (fd >= 0) ::close(fd);
    parts_.log.warn("Unable to turn on AOF: {}", e.what());
    return "Unable to turn on AOF. Check server logs.";
  }
  manifest_ = fresh;
  base_size_ = 0;
  incr_sizes_ = 0;
  rewrite_base_size_ = 0;
  rewrite_in_progress_ = true;  // until Maintain takes the request below
  rewrite_requested_ = true;    // the thread is not running yet: no lock needed
  Open(fd, FileSize(paths_.Path(fresh.incrs.back().name)), o);
  parts_.log.info("AOF turned on (CONFIG SET appendonly yes): writing its base in the background");
  return {};
}

}  // namespace latch::journal
