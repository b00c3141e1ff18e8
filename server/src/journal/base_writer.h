#pragma once
// The records of a base: every live key of the given databases as the journal states it
// (record_codec.h, container_records.h), after one LATCH.FENCE for the fencing counter and a
// SELECT before each database but the first. Two users: BGREWRITEAOF's base file (rewrite.cpp,
// absolute Unix deadlines) and a cluster node's Raft snapshot (cluster/cluster_snapshot.cpp,
// deadlines relative to the restore). Read shard by shard: the caller says how a shard is held
// while its keys are read, how a deadline is written, and where the bytes go.
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "latch/clock.h"
#include "store/keyspace.h"

namespace latch::journal {

struct BaseWriter {
  // Holds `shard` while its keys are read; false gives up (WriteBase throws "aborted").
  std::function<bool(store::Shard&)> lock;
  std::function<void(store::Shard&)> unlock;
  // The PXAT value of a key that has a deadline, read at `now` (under the shard's lock).
  std::function<std::int64_t(const store::Object&, const TimeSnapshot& now)> deadline;
  // Takes the bytes encoded so far, about every MiB and once at the end. May throw.
  std::function<void(const std::string&)> flush;
};

// Writes the base of `dbs` (database number, keyspace), keys that expired before their
// shard was read left out; returns the bytes handed to `flush`. Throws std::runtime_error
// when `lock` gives up, or what `flush` throws.
std::uint64_t WriteBase(const std::vector<std::pair<int, store::Keyspace*>>& dbs,
                        std::uint64_t fence, const Clock& clock, const BaseWriter& w);

}  // namespace latch::journal
