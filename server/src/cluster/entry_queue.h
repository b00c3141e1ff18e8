#pragma once
// The leader's units of records on their way to the Raft log (docs/CLUSTER.md, "What a log
// entry is"), without threads or libraft, so that the rules are tested on their own
// (tests/cluster/entry_queue_test.cpp). ClusterLog holds one under its mutex.
//
// A unit is the records one thread appended under its shard locks: a command, an EXEC, a
// script, an active-expiry pass over one shard with the hand-offs it caused. Records are
// numbered as they are appended (the connection's hold waits for a number), so a unit's
// numbers need not be contiguous: two threads appending at once interleave them. A unit takes
// its place in the log when Placed (its thread's first shard release), and the proposer
// takes complete units from the front only, in place order, several to an entry: an entry
// holds whole units. Read markers (FenceRead past the lease) ride on the next entry taken.
//
// "Committed" for a record number n is the watermark: every unit (and marker) holding a
// number <= n is settled. A unit still open on another thread keeps the watermark below its
// first number, so a reply never goes out before its own record's entry committed.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <set>
#include <string>
#include <vector>

namespace latch::cluster {

class EntryQueue {
 public:
  // What one Raft entry carries: the records of whole units, and the numbers to settle when
  // the entry commits or fails (each unit's first number, and the markers').
  struct Entry {
    std::string records;
    std::vector<std::uint64_t> settles;
    std::uint64_t upto = 0;  // the highest record number it holds
    bool effects = false;    // it holds records (not read markers only)
  };

  // A record's number. `opens` for a unit's first record: the number then keeps the
  // watermark below it until the unit is settled.
  std::uint64_t Number(bool opens);
  // A read marker's number, settled with the next entry taken.
  std::uint64_t Marker();
  // The unit that opened with number `first` takes its place in the log; returns its slot.
  std::uint64_t Place(std::uint64_t first);
  // Its records (each unit starts and ends in database 0) and its last number.
  void Complete(std::uint64_t slot, std::string records, std::uint64_t last);

  // The front's complete units (all that fit in `max_bytes`, at least one) and every pending
  // marker, as one entry; false when there is nothing to propose.
  bool Take(std::size_t max_bytes, Entry* out);
  // The entry's numbers are settled (committed, or known lost).
  void Settle(const std::vector<std::uint64_t>& numbers);

  std::uint64_t appended() const { return appended_; }
  // Every record numbered up to here is in a settled unit.
  std::uint64_t watermark() const;
  // Placed units not yet taken (complete or not), read markers not yet taken.
  bool queued() const { return !slots_.empty(); }
  bool markers_pending() const { return !markers_.empty(); }
  bool ready() const { return (!slots_.empty() && slots_.front().complete) || !markers_.empty(); }

 private:
  struct Slot {
    std::uint64_t first = 0;
    std::uint64_t last = 0;
    std::string records;
    bool complete = false;
  };
  std::uint64_t appended_ = 0;
  std::set<std::uint64_t> unsettled_;   // first numbers of open, placed and proposed units
  std::vector<std::uint64_t> markers_;  // numbers of markers not taken yet
  std::deque<Slot> slots_;              // placed, not taken: in log order
  std::uint64_t front_slot_ = 0;        // the slot number of slots_.front()
};

}  // namespace latch::cluster
