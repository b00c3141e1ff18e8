#pragma once
// INFO commandstats and latencystats, and redis_commands_*{cmd} in /metrics: per command
// (subcommands apart, as Redis's "config|get"), calls, time, rejected and failed calls, and a
// latency histogram.
//
// The data path pays one steady_clock read per command (CommandBatch) and a few plain
// stores into the calling thread's own block: no lock, no atomic read-modify-write, no cache
// line shared with another worker. Readers (INFO, a scrape) sum the blocks of every thread;
// a block is never freed before the CommandStats, so a reader can walk them under the
// registration mutex while workers write (relaxed atomics, no tearing).
#include <array>
#include <atomic>
#include <chrono>
#include <ctime>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "latch/clock.h"

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

 public:
  struct Block;  // one thread's slots (command_stats.cpp)

 private:
  Block& Mine();
  [[gnu::noinline]] Block& AddBlock();
  // Adds every thread's histogram of `id` into `sum`; returns the calls counted.
  std::uint64_t SumHistograms(std::uint16_t id,
                              std::array<std::uint64_t, kLatencyBuckets>* sum) const;
  const std::uint64_t instance_;  // tells a thread's cached block of another server apart
  mutable std::mutex mu_;         // blocks_ membership
  std::vector<std::unique_ptr<Block>> blocks_;
};

// Command durations: steady_clock nanoseconds (on Linux, CLOCK_MONOTONIC: called directly,
// without libstdc++'s out-of-line wrapper around it).
inline std::int64_t CommandClockNanos() {
#if defined(__linux__)
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
#else
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
#endif
}

// The requests of one read that a connection runs back to back (Connection::ProcessInput
// holds one of these while it runs them). Inside a batch a client's command is timed from
// where the previous command's timing ended: one clock read per command instead of two, the
// cost that a pipeline pays most. The interval then also holds parsing and dispatching the
// request (a few hundred ns), which Redis leaves out; nothing else runs between the two on
// this thread. Outside a batch (REST, in-process calls) and for EXEC's and scripts' inner
// commands (Lua runs between redis.call()s), each command reads the clock at its start.
class CommandBatch {
 public:
  CommandBatch() noexcept { mark_ = 0; }
  ~CommandBatch() { mark_ = kOutside; }
  CommandBatch(const CommandBatch&) = delete;
  CommandBatch& operator=(const CommandBatch&) = delete;

  // Dispatch, on entry: the previous command's end, or 0 (none: outside a batch, first
  // command, or the previous one was refused or queued). Consumed: a command that is not
  // timed (refused, QUEUED) leaves 0 for the next one.
  static std::int64_t Take() noexcept {
    const std::int64_t m = mark_;
    if (m > 0) mark_ = 0;
    return m > 0 ? m : 0;
  }
  // The previous command's end when the next one's timing will start there, else 0.
  static std::int64_t Peek() noexcept { return mark_ > 0 ? mark_ : 0; }
  // RecordCommandCall: where the next command's timing starts, if inside a batch.
  static void Mark(std::int64_t end) noexcept {
    if (mark_ >= 0) mark_ = end;
  }

 private:
  static constexpr std::int64_t kOutside = -1;
  static inline thread_local std::int64_t mark_ = kOutside;
};

// The time snapshot of a connection's next command (Connection::Execute): in a batch, the
// previous command's end, which the command's timing starts from too (no clock read).
inline TimeSnapshot NextCommandNow(const Clock& clock) {
  const std::int64_t mark = CommandBatch::Peek();
  return mark > 0 ? clock.SameWallOffsetAt(mark) : clock.NowSameWallOffset();
}

// Dispatch's hooks (commands/command_table.cpp), one call each. `mark`: CommandBatch::Take()
// on entry to Dispatch, used for a client's own command only.
struct CommandTimer {
  CommandTimer(std::int64_t mark, bool client)
      : start(client && mark > 0 ? mark : CommandClockNanos()) {}
  std::int64_t start;
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
