#pragma once
// The chaos harness: many clients fight over hot keys with short TTLs against a real latchd
// that is killed with -9 and restarted, paused with SIGSTOP/SIGCONT, and whose clients drop
// their connections or pause while holding a lock past its TTL; the recorded history is then
// checked (lease_history.h). The chaos test (chaos_test.cpp: a few seconds per mode, in CI)
// and the soak (soak_test.cpp: a number of grants per mode, ctest -L soak) drive this one
// harness with different ChaosOptions.
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "durability/latchd_child.h"
#include "durability/lease_history.h"

namespace latch::test {

// The defaults are the chaos test's: 40 clients on 5 keys, 500 ms TTL, 50-350 ms of work.
struct ChaosOptions {
  int keys = 5;
  int clients = 40;
  std::int64_t ttl_ms = 500;
  // The work under the lock: work_min_ms + rng() % work_spread_ms.
  int work_min_ms = 50;
  int work_spread_ms = 300;
  // One lease in stall_one_in: the client pauses for 1.5 TTL holding it. One acquire in
  // drop_one_in: the connection is closed right after the request.
  int stall_one_in = 10;
  int drop_one_in = 200;
  // With a target the run ends once that many leases are recorded (or at the time limit).
  std::uint64_t target_grants = 0;
};

struct Counts {
  HistoryVerdict verdict;
  std::size_t grants = 0;  // leases recorded (the verdict counts the usable ones)
  std::size_t kills = 0, pauses = 0, drops = 0;
  std::size_t fenced_refusals = 0, fenced_accepted_below = 0;
  double seconds = 0;  // how long the clients ran
};

class Chaos {
 public:
  explicit Chaos(std::vector<std::string> directives, ChaosOptions options = {});

  // Runs for `seconds` (or until options.target_grants), then checks the history.
  Counts Run(int seconds);

 private:
  void Faults(int seconds);
  bool Done(int rounds) const;
  void Record(const Lease& l);
  void Client(int id);

  ChaosOptions options_;
  LatchdChild server_;
  FencedResource resource_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::vector<Lease> leases_;
  std::atomic<std::uint64_t> recorded_{0};
  std::atomic<std::size_t> kills_{0}, pauses_{0}, drops_{0};
};

// One line of counts, "[chaos] <mode> leases=... overlaps=...".
void Print(const char* mode, const Counts& c);

// LATCH_CHAOS_SECONDS, default 12: how long each chaos mode runs.
int ChaosSeconds();

}  // namespace latch::test
