#pragma once
// The server's armed faults (latch/testing/fault.h), its whole-server pause, what was injected
// and, while test mode is on, how many times each command ran. One per ServerState.
//
// Cost when unused: the dispatcher reads active() (one relaxed atomic load) before each
// command and does nothing else unless it is true. It is true while a rule is armed or a
// pause runs, and always in test mode (ScopedServer, latchd --enable-test-commands yes),
// where every command is also counted by name. Everything behind it takes one mutex: test
// traffic only.
#include <atomic>
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
  bool Matches(const FaultRule& rule, std::string_view command, std::string_view key) const;
  void Refresh();  // active_ from the state below; under mu_ (or in the constructor)
  static std::int64_t SteadyMs();

  std::atomic<bool> active_{false};
  std::atomic<bool> test_mode_;
  mutable std::mutex mu_;
  std::vector<Armed> rules_;
  std::uint64_t next_id_ = 1;
  std::int64_t paused_until_ms_ = 0;  // steady clock; 0 = no pause
  FaultCounts counts_;
  std::map<std::string, std::uint64_t, std::less<>> by_command_;
};

}  // namespace latch::testing
