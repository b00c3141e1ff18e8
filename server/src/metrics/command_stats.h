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
#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "catalogue/command_spec.h"
#include "latch/clock.h"

namespace latch {

struct CommandSpec;
class CommandCatalogue;
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
  static constexpr std::size_t kMaxCommands = kMaxCommandIds;  // stat_id (catalogue/command_spec.h)

  CommandStats();
  ~CommandStats();
  CommandStats(const CommandStats&) = delete;
  CommandStats& operator=(const CommandStats&) = delete;

  // Worker side. `nanos`: the command's run time; `failed`: it replied an error. Inline:
  // Dispatch records every command (commands/command_record.h).
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
  // The smallest run time that SLOWLOG or the LATENCY monitor records (RecordSlowNanos below,
  // set by ServerState::SyncHotOptions): a faster command skips both with one compare.
  void SetSlowNanos(std::uint64_t n) { slow_nanos_.store(n, std::memory_order_relaxed); }
  std::uint64_t slow_nanos() const { return slow_nanos_.load(std::memory_order_relaxed); }

  using Histogram = std::array<std::atomic<std::uint64_t>, kLatencyBuckets>;
  // One thread's numbers for one command. Written by that thread only (load + store, no RMW).
  struct Slot {
    std::atomic<std::uint64_t> calls{0}, nanos{0}, rejected{0}, failed{0};
    std::atomic<Histogram*> histogram{nullptr};
    ~Slot() { delete histogram.load(); }
  };
  struct Block {  // one thread's slots
    std::array<Slot, kMaxCommands> slots;
  };

  // Bucket of a duration: below 1 us the first; then 16 steps per power of two.
  static int BucketOf(std::uint64_t nanos) {
    if (nanos < 1024) return 0;
    const int exp = static_cast<int>(std::bit_width(nanos)) - 1;  // 10.. for >= 1024 ns
    const int sub = static_cast<int>((nanos >> (exp - 4)) & (kLatencySubBuckets - 1));
    const int b = (exp - 9) * kLatencySubBuckets + sub;
    return b < kLatencyBuckets ? b : kLatencyBuckets - 1;
  }

 private:
  // This thread's block of the CommandStats it last recorded into.
  struct CachedBlock {
    std::uint64_t instance = 0;
    Block* block = nullptr;
  };
  static thread_local CachedBlock t_cached_block_;

  // The first call of a thread (or after another server's CommandStats was used on it) adds
  // a block.
  Block& Mine() {
    if (t_cached_block_.instance == instance_) [[likely]]
      return *t_cached_block_.block;
    return AddBlock();
  }
  [[gnu::noinline]] Block& AddBlock();
  // A command's first timed call on this thread allocates its histogram (4 KB).
  [[gnu::noinline]] static Histogram* NewHistogram(std::atomic<Histogram*>& slot);
  // Adds every thread's histogram of `id` into `sum`; returns the calls counted.
  std::uint64_t SumHistograms(std::uint16_t id,
                              std::array<std::uint64_t, kLatencyBuckets>* sum) const;
  static void Bump(std::atomic<std::uint64_t>& v, std::uint64_t by) {
    v.store(v.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
  }
  const std::uint64_t instance_;  // tells a thread's cached block of another server apart
  std::atomic<std::uint64_t> slow_nanos_{0};  // 0 until set: every command checks them all
  mutable std::mutex mu_;                     // blocks_ membership
  std::vector<std::unique_ptr<Block>> blocks_;
};

inline constinit thread_local CommandStats::CachedBlock CommandStats::t_cached_block_{};

inline void CommandStats::Record(std::uint16_t id, std::uint64_t nanos, bool failed,
                                 bool histogram) {
  Slot& s = Mine().slots[id];
  Bump(s.calls, 1);
  Bump(s.nanos, nanos);
  if (failed) Bump(s.failed, 1);
  if (!histogram) return;
  Histogram* h = s.histogram.load(std::memory_order_relaxed);  // written by this thread only
  if (h == nullptr) [[unlikely]]
    h = NewHistogram(s.histogram);
  Bump((*h)[static_cast<std::size_t>(BucketOf(nanos))], 1);
}

// The smallest run time that SLOWLOG (slowlog-log-slower-than, us; negative: off) or the
// LATENCY monitor (latency-monitor-threshold, ms; 0: off) records, in nanoseconds (UINT64_MAX:
// neither). floor(n / 1000) >= us exactly when n >= us * 1000, and likewise for ms.
inline std::uint64_t RecordSlowNanos(std::int64_t slowlog_us, std::int64_t latency_ms) {
  constexpr std::uint64_t kNever = UINT64_MAX;
  auto scaled = [](std::int64_t v, std::uint64_t unit) {
    const auto u = static_cast<std::uint64_t>(v);
    return u > kNever / unit ? kNever : u * unit;
  };
  std::uint64_t t = kNever;
  if (slowlog_us >= 0) t = std::min(t, scaled(slowlog_us, 1000));
  if (latency_ms > 0) t = std::min(t, scaled(latency_ms, 1'000'000));
  return t;
}

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
// RecordCall, RecordCommandCall and RecordCommandRejected (commands/command_record.h) use it.

// INFO commandstats / latencystats lines, in the catalogue's order; nothing when either is
// null (a server not fully built).
void AppendInfoCommandStats(std::string* out, const CommandStats* stats,
                            const CommandCatalogue* catalogue);
void AppendInfoLatencyStats(std::string* out, const CommandStats* stats,
                            const CommandCatalogue* catalogue);

}  // namespace latch
