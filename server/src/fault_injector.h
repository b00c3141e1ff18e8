#pragma once
// The server's armed faults (latch/testing/fault.h), its whole-server pause, what was injected
// and, while test mode is on, how many times each command ran. One per ServerState.
//
// Cost when unused: the dispatcher reads active() (one relaxed atomic load) before each
// command and does nothing else unless it is true. It is true while a rule is armed or a
// pause runs, and always in test mode (ScopedServer, latchd --enable-test-commands yes),
// where every command is also counted by name. Everything behind it takes one mutex: test
// traffic only.
//
// Stall points are the other kind of fault: not a client's command but a step inside the
// server, between a write in the store and its record on disk, where a test stops the thread
// that reaches it (TEST.FAULT STALL) so that it can kill -9 the process exactly there. The
// code at a point reads stalls_armed() (one relaxed load) and calls AtStallPoint only when
// it is true.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "latch/testing/fault.h"

namespace latch::testing {

// What the dispatcher does with one command instead of running it normally.
// Where a thread can be stopped on purpose.
enum class StallPoint : std::uint8_t {
  // About to append the record of a key's new value (a write, a lock grant) to the journal,
  // under the key's shard lock (journal/persistence.cpp). TEST.FAULT name: journal-append.
  kJournalAppend,
  // About to write() a batch of appended records to the journal file: the journal thread,
  // or under everysec/no the io thread writing before its replies (journal/journal.cpp).
  // No key. TEST.FAULT name: journal-write.
  kJournalWrite,
};
// "journal-append" / "journal-write" (case-insensitive); nullopt for any other name.
std::optional<StallPoint> StallPointNamed(std::string_view name);

struct FaultDecision {
  FaultAction action;
  std::string error;          // kError
  std::int64_t delay_ms = 0;  // kDelay (a rule's delay, or what is left of a pause)
};

class FaultInjector {
 public:
  explicit FaultInjector(bool test_mode) : test_mode_(test_mode) { Refresh(); }

  bool active() const { return active_.load(std::memory_order_relaxed); }
  bool test_mode() const { return test_mode_.load(std::memory_order_relaxed); }
  void set_test_mode(bool on);

  // Returns the rule's id (for ListRules).
  std::uint64_t Arm(FaultRule rule);
  // Every command that arrives in the next `ms` of real time waits until the pause ends.
  void Pause(std::int64_t ms);
  // Disarms every rule and ends any pause; counters are kept.
  void Clear();
  // Clear(), and zeroes the fault counters and the per-command counts.
  void Reset();

  // The dispatcher's question for one client command; nullopt: run it normally. Counts the
  // command by name in test mode, and the fault when there is one.
  std::optional<FaultDecision> Decide(std::string_view command, std::string_view first_key);

  // Stops the next `count` threads (0: every one until resumed) that reach `point` with a key
  // matching `key_pattern` (empty: any; a keyless point never matches a pattern), each until
  // Resume() or for at most `max_ms` of real time. Returns the stall's id.
  std::uint64_t ArmStall(StallPoint point, std::string key_pattern, std::int64_t count,
                         std::int64_t max_ms);
  // Lets every stalled thread go on and disarms every stall (Clear and Reset do too).
  void Resume();
  bool stalls_armed() const { return stalls_armed_.load(std::memory_order_relaxed); }
  // The code at `point`, when stalls_armed(): blocks the calling thread while a matching
  // stall holds it (see ArmStall). Whatever locks the caller holds stay held.
  void AtStallPoint(StallPoint point, std::string_view key);

  FaultCounts counts() const;
  std::size_t armed() const;
  std::map<std::string, std::uint64_t> command_counts() const;
  // INFO's "# Faults" lines.
  void AppendInfo(std::string* out) const;

 private:
  struct Armed {
    std::uint64_t id;
    FaultRule rule;
    std::mt19937_64 random;
  };
  struct Stall {
    std::uint64_t id;
    StallPoint point;
    std::string key_pattern;
    std::int64_t count;  // 0: until resumed
    std::int64_t max_ms;
  };
  bool Matches(const FaultRule& rule, std::string_view command, std::string_view key) const;
  void Refresh();  // active_ from the state below; under mu_ (or in the constructor)
  void ReleaseStallsLocked();  // disarms the stalls and wakes the stalled threads; under mu_
  static std::int64_t SteadyMs();

  std::atomic<bool> active_{false};
  std::atomic<bool> test_mode_;
  mutable std::mutex mu_;
  std::vector<Armed> rules_;
  std::uint64_t next_id_ = 1;
  std::int64_t paused_until_ms_ = 0;  // steady clock; 0 = no pause
  FaultCounts counts_;
  std::map<std::string, std::uint64_t, std::less<>> by_command_;
  std::atomic<bool> stalls_armed_{false};
  std::vector<Stall> stalls_;
  std::condition_variable resumed_;
  std::uint64_t resumes_ = 0;        // bumped by every release: a stalled thread's signal
  std::size_t stalled_threads_ = 0;  // stopped at a point right now (INFO)
};

}  // namespace latch::testing
