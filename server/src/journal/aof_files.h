#pragma once
// The journal's files, laid out as Redis 7's multi-part AOF so that redis-check-aof and an
// operator's habits carry over:
//
//   <dir>/<appenddirname>/<appendfilename>.<n>.base.aof   a snapshot of the keyspace (RESP)
//   <dir>/<appenddirname>/<appendfilename>.<m>.incr.aof   records appended since that snapshot
//   <dir>/<appenddirname>/<appendfilename>.manifest       which of them make up the journal
//
// Manifest lines are Redis's: "file <name> seq <n> type b|i". Loading reads the base, then
// every incremental file in order. A manifest is replaced atomically (temporary file, fsync,
// rename, fsync of the directory), so a crash leaves either the old or the new one.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace latch::journal {

struct AofFile {
  std::string name;  // file name inside the AOF directory
  std::int64_t seq = 0;
  char type = 'i';  // 'b' base, 'i' incremental
};

struct Manifest {
  std::optional<AofFile> base;
  std::vector<AofFile> incrs;  // in load order

  std::int64_t last_incr_seq() const { return incrs.empty() ? 0 : incrs.back().seq; }
  std::string Text() const;
};

struct AofPaths {
  std::string dir;     // <dir>/<appenddirname>
  std::string prefix;  // appendfilename
  std::string Manifest() const { return dir + "/" + prefix + ".manifest"; }
  std::string BaseName(std::int64_t seq) const;
  std::string IncrName(std::int64_t seq) const;
  std::string TempRewrite() const { return dir + "/temp-rewriteaof-" + prefix + ".aof"; }
  std::string Path(const std::string& name) const { return dir + "/" + name; }
};

// Parses a manifest file; nullopt when it does not exist. Throws std::runtime_error (with
// Redis's wording) on a malformed one.
std::optional<Manifest> ReadManifest(const std::string& path);
// Atomically replaces the manifest. Throws std::runtime_error on an I/O error.
void WriteManifest(const AofPaths& paths, const Manifest& m);
// Creates the directory if missing. Throws std::runtime_error.
void EnsureDirectory(const std::string& dir);
// Opens `path` for appending (created if missing); returns the fd and sets *size. Throws.
int OpenForAppend(const std::string& path, std::uint64_t* size);
// fsync of a directory, so that a rename or a new file in it survives a power loss.
void SyncDirectory(const std::string& dir);
std::uint64_t FileSize(const std::string& path);  // 0 when missing
// The whole file, or throws std::runtime_error.
std::string ReadWholeFile(const std::string& path);

}  // namespace latch::journal
