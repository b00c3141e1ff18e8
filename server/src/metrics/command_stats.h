#pragma once
// INFO commandstats and latencystats, and redis_commands_*{cmd} in /metrics: per command
// (subcommands apart, as Redis's "config|get"), calls, time, rejected and failed calls, and a
// latency histogram.
//
// The data path pays one steady_clock read before and after a command and a few plain
// stores into the calling thread's own block: no lock, no atomic read-modify-write, no cache
// line shared with another worker. Readers (INFO, a scrape) sum the blocks of every thread;
// a block is never freed before the CommandStats, so a reader can walk them under the
// registration mutex while workers write (relaxed atomics, no tearing).
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace latch {

struct ServerState;
struct CommandSpec;
class CommandTable;
struct CommandContext;

// Histogram buckets: 16 linear steps per power of two of nanoseconds, from 1 us (below: the
// first bucket) to 2^42 ns (~73 minutes, above: the last): within 6.25% of the true value.
inline constexpr int kLatencySubBuckets = 16;
inline constexpr int kLatencyBuckets = 33 * kLatencySubBuckets;

struct CommandTotals {
  std::uint64_t calls = 0, nanos = 0, rejected = 0, failed = 0;
};

class CommandStats {
 public:
  static constexpr std::size_t kMaxCommands = 512;  // command and subcommand ids (stat_id)

  CommandStats();
  ~CommandStats();
  CommandStats(const CommandStats&) = delete;
  CommandStats& operator=(const CommandStats&) = delete;

  // Worker side. `nanos`: the command's run time; `failed`: it replied an error.
  void Record(std::uint16_t id, std::uint64_t nanos, bool failed, bool histogram);
  // Refused before it ran (arity, NOAUTH, OOM, BUSY...): Redis's rejected_calls.
  void Rejected(std::uint16_t id);

  // Reader side: sums over every thread.
  CommandTotals Totals(std::uint16_t id) const;
  // The value (in microseconds) under which `percentile` percent of the calls fell; -1 when
  // the command has no recorded call.
  double PercentileUsec(std::uint16_t id, double percentile) const;
  // LATENCY HISTOGRAM: cumulative call counts at Redis's boundaries (1024 ns doubling, shown
  // in whole microseconds as Redis shows them), only where the count grows.
  std::vector<std::pair<std::int64_t, std::uint64_t>> CumulativeUsec(std::uint16_t id) const;
  // CONFIG RESETSTAT. A worker recording at the same instant may keep its last call.
  void Reset();

 private:
  struct Slot;
  struct Block;
  Block& Mine();
  // Adds every thread's histogram of `id` into `sum`; returns the calls counted.
  std::uint64_t SumHistograms(std::uint16_t id,
                              std::array<std::uint64_t, kLatencyBuckets>* sum) const;
  const std::uint64_t instance_;  // tells a thread's cached block of another server apart
  mutable std::mutex mu_;         // blocks_ membership
  std::vector<std::unique_ptr<Block>> blocks_;
};

// Dispatch's hooks (commands/command_table.cpp), one call each.
struct CommandTimer {
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
};
// After a command ran: commandstats, latency, slowlog. `reply_start`: the size of the reply
// buffer before the handler ran (an error reply there is a failed call).
void RecordCommandCall(const CommandSpec& spec, CommandContext& ctx, const CommandTimer& timer,
                       std::size_t reply_start);
void RecordCommandRejected(const CommandSpec& spec, CommandContext& ctx);

// INFO commandstats / latencystats lines, in the command table's order.
void AppendInfoCommandStats(std::string* out, ServerState& st);
void AppendInfoLatencyStats(std::string* out, ServerState& st);

}  // namespace latch
