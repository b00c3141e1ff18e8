#pragma once
// Replays the journal into the keyspace at start-up, before clients may use it.
//
// Deadlines in the journal are absolute Unix times, so a key whose deadline passed while the
// server was down is not restored (a lease that ran out stays out). Fencing tokens found in the
// records raise the server's counter, so the next grant is above every token granted before.
//
// A torn last record (a crash in the middle of a write) is cut off with Redis's warnings when
// aof-load-truncated is yes; with no, or anywhere but at the end of the last file, the server
// refuses to start. Other damage refuses to start too. Messages are Redis's.
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "journal/aof_files.h"
#include "latch/clock.h"
#include "store/keyspace_set.h"

namespace spdlog {
class logger;
}  // namespace spdlog

namespace latch::store {
class Keyspace;
class FencingTokens;
}  // namespace latch::store

namespace latch::journal {

// The journal cannot be loaded; what() is the log line (already in Redis's words).
class LoadError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct LoadResult {
  std::uint64_t records = 0;
  std::uint64_t max_token = 0;
  std::uint64_t base_size = 0;   // bytes of the base file
  std::uint64_t total_size = 0;  // bytes of every file after a truncation
};

// Where the records go: the server's databases, and how one is created on first use (with
// its lock tables and key-event hook: ServerState::Database).
struct Databases {
  store::KeyspaceSet& set;
  std::function<store::Keyspace&(int db)> ensure;
};

// Applies `records` (whole records in the journal's encoding, starting in database 0) as the
// loader does, with deadlines read against `now`: a Raft entry on a cluster node
// (cluster/cluster_log.h). False, with the reason in *error, when a record is not one the
// journal writes; the records before it stay applied.
bool ApplyRecords(std::string_view records, const Databases& dbs, store::FencingTokens& tokens,
                  const TimeSnapshot& now, std::string* error);

LoadResult LoadJournal(const AofPaths& paths, const Manifest& manifest, const Databases& dbs,
                       store::FencingTokens& tokens, const TimeSnapshot& now, bool load_truncated,
                       spdlog::logger& log);

}  // namespace latch::journal
