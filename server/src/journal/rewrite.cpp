// BGREWRITEAOF without fork(): a new base file is written from the live keyspace, one shard at
// a time under that shard's lock (a few milliseconds each), while the server goes on.
//
// Why this is exact: records state a key's resulting value (record_codec.h), so replaying
// them is idempotent. The journal switches to a new incremental file *before* the first shard
// is read. A change made before the switch is in the snapshot (the shard is read after it); a
// change made after it is in the new incremental file, replayed after the base, and since a
// record is a state, the last one for a key wins whether or not the snapshot saw it too.
//
// Crash safety: the manifest lists the new incremental file (next to the old ones) before any
// record goes to it, and names the new base only once the base is fsync'd and renamed; until
// then the old base and incremental files stay. A kill -9 at any point loads either the old
// files plus the new incremental one, or the new base plus it: nothing acknowledged is lost.
#include <fcntl.h>
#include <spdlog/logger.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "journal/base_writer.h"
#include "journal/persistence.h"
#include "journal/record_codec.h"
#include "store/keyspace_set.h"
#include "store/lock_table.h"
#include "store/shard_guard.h"

namespace latch::journal {
namespace {
void WriteOrThrow(int fd, const std::string& data) {
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::runtime_error(std::string("write: ") + std::strerror(errno));
    done += static_cast<std::size_t>(n);
  }
}
}  // namespace

std::uint64_t Persistence::WriteSnapshot(int fd, std::uint64_t swaps) {
  std::vector<std::pair<int, store::Keyspace*>> dbs;
  for (int db = 0; db < parts_.dbs.count(); ++db) {
    store::Keyspace* ks = parts_.dbs.Find(db);
    if (ks != nullptr && ks->TotalKeys() != 0) dbs.emplace_back(db, ks);
  }
  const BaseWriter writer{
      // CONFIG SET appendonly no or shutdown stops the wait (the files on disk are consistent
      // without this base): the one asking may be an EXEC that holds every shard.
      .lock = [this](store::Shard& s) { return store::LockShard(s, &abort_rewrite_); },
      .unlock = [](store::Shard& s) { store::UnlockShard(s); },
      .deadline =
          [](const store::Object& o, const TimeSnapshot& now) {
            return std::max<std::int64_t>(1, now.MonoToWall(o.expire_at()));
          },
      .flush = [fd](const std::string& bytes) { WriteOrThrow(fd, bytes); },
  };
  const std::uint64_t bytes = WriteBase(dbs, parts_.locks.tokens().last(), parts_.clock, writer);
  // A SWAPDB is not idempotent as the other records are: one since `swaps` was read (before
  // the switch to the new incremental file) would be both in the snapshot (partly) and in
  // that file. The rewrite then fails and the files on disk stay as they were (a later
  // rewrite retries).
  if (parts_.dbs.swaps() != swaps) throw std::runtime_error("aborted: SWAPDB during the rewrite");
  return bytes;
}

void Persistence::Rewrite() {
  parts_.log.info("Background append only file rewriting started");
  // After CONFIG SET dir (toggle.cpp): this rewrite moves the journal to the new directory.
  // Its directory is created if missing, as Redis's rewrite does.
  if (dir_moved_.exchange(false)) paths_.dir = appenddirname_;
  EnsureDirectory(paths_.dir);
  const std::uint64_t swaps = parts_.dbs.swaps();  // before the switch: see WriteSnapshot
  // 1. The new incremental file, listed before it gets a record.
  Manifest during = manifest_;
  const std::int64_t incr_seq = during.last_incr_seq() + 1;
  const AofFile incr{paths_.IncrName(incr_seq), incr_seq, 'i'};
  std::uint64_t size = 0;
  const int incr_fd = OpenForAppend(paths_.Path(incr.name), &size);
  during.incrs.push_back(incr);
  try {
    WriteManifest(paths_, during);
  } catch (...) {
    ::close(incr_fd);
    throw;
  }
  manifest_ = during;
  incr_sizes_ += journal_->file_size();
  journal_->SwitchFile(incr_fd, size);

  // 2. The snapshot into a temporary file, synced.
  const std::string temp = paths_.TempRewrite();
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error("Can't open the temp rewrite file: " + temp);
  std::uint64_t bytes = 0;
  try {
    bytes = WriteSnapshot(fd, swaps);
    if (::fsync(fd) != 0) throw std::runtime_error(std::string("fsync: ") + std::strerror(errno));
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);

  // 3. The new base under its name, then the manifest that names it.
  const std::int64_t base_seq = (during.base ? during.base->seq : 0) + 1;
  const AofFile base{paths_.BaseName(base_seq), base_seq, 'b'};
  if (::rename(temp.c_str(), paths_.Path(base.name).c_str()) != 0) {
    throw std::runtime_error("Error trying to rename the temporary AOF base file");
  }
  SyncDirectory(paths_.dir);
  Manifest after;
  after.base = base;
  after.incrs.push_back(incr);
  WriteManifest(paths_, after);
  manifest_ = after;
  base_size_ = bytes;
  incr_sizes_ = 0;
  rewrite_base_size_ = bytes + journal_->file_size();

  // 4. The files nothing refers to any more.
  if (during.base) ::unlink(paths_.Path(during.base->name).c_str());
  for (const AofFile& f : during.incrs) {
    if (f.seq != incr.seq) ::unlink(paths_.Path(f.name).c_str());
  }
  parts_.log.info("Background AOF rewrite finished successfully ({} bytes of base)", bytes);
}

}  // namespace latch::journal
