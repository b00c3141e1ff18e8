#include "metrics/command_stats.h"

#include <bit>
#include <cstdio>

#include "commands/command_table.h"
#include "commands/monitor.h"
#include "commands/slowlog.h"
#include "metrics/latency_monitor.h"
#include "server_state.h"

namespace latch {
namespace {
std::atomic<std::uint64_t> next_instance{1};

// Bucket of a duration: below 1 us the first; then 16 steps per power of two.
int BucketOf(std::uint64_t nanos) {
  if (nanos < 1024) return 0;
  const int exp = static_cast<int>(std::bit_width(nanos)) - 1;  // 10.. for >= 1024 ns
  const int sub = static_cast<int>((nanos >> (exp - 4)) & (kLatencySubBuckets - 1));
  const int b = (exp - 9) * kLatencySubBuckets + sub;
  return b < kLatencyBuckets ? b : kLatencyBuckets - 1;
}
// The highest duration a bucket holds, in nanoseconds (Redis reports HdrHistogram's highest
// equivalent value too).
double BucketTopNanos(int b) {
  if (b == 0) return 1024;
  const int exp = b / kLatencySubBuckets + 9;
  const int sub = b % kLatencySubBuckets;
  return static_cast<double>((std::uint64_t{1} << exp) + (static_cast<std::uint64_t>(sub) + 1) *
                                                             (std::uint64_t{1} << (exp - 4)));
}
}  // namespace

// One thread's numbers for one command. Written by that thread only (load + store, no RMW).
struct CommandStats::Slot {
  std::atomic<std::uint64_t> calls{0}, nanos{0}, rejected{0}, failed{0};
  std::atomic<std::array<std::atomic<std::uint64_t>, kLatencyBuckets>*> histogram{nullptr};
  ~Slot() { delete histogram.load(); }
};
struct CommandStats::Block {
  std::array<Slot, kMaxCommands> slots;
};

namespace {
void Bump(std::atomic<std::uint64_t>& v, std::uint64_t by) {
  v.store(v.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
}
}  // namespace

CommandStats::CommandStats() : instance_(next_instance.fetch_add(1)) {}
CommandStats::~CommandStats() = default;

namespace {
// This thread's block of the CommandStats it last recorded into.
struct CachedBlock {
  std::uint64_t instance = 0;
  CommandStats::Block* block = nullptr;
};
thread_local CachedBlock cached_block;
}  // namespace

// The first call of a thread (or after another server's CommandStats was used on it).
CommandStats::Block& CommandStats::Mine() {
  if (cached_block.instance == instance_) [[likely]]
    return *cached_block.block;
  return AddBlock();
}

CommandStats::Block& CommandStats::AddBlock() {
  std::lock_guard lock(mu_);
  blocks_.push_back(std::make_unique<Block>());
  cached_block = {instance_, blocks_.back().get()};
  return *cached_block.block;
}

namespace {
// A command's first timed call on this thread allocates its histogram (4 KB).
[[gnu::noinline]] std::array<std::atomic<std::uint64_t>, kLatencyBuckets>* NewHistogram(
    std::atomic<std::array<std::atomic<std::uint64_t>, kLatencyBuckets>*>& slot) {
  auto* h = new std::array<std::atomic<std::uint64_t>, kLatencyBuckets>();
  slot.store(h, std::memory_order_release);
  return h;
}
}  // namespace

void CommandStats::Record(std::uint16_t id, std::uint64_t nanos, bool failed, bool histogram) {
  Slot& s = Mine().slots[id];
  Bump(s.calls, 1);
  Bump(s.nanos, nanos);
  if (failed) Bump(s.failed, 1);
  if (!histogram) return;
  auto* h = s.histogram.load(std::memory_order_relaxed);  // written by this thread only
  if (h == nullptr) [[unlikely]]
    h = NewHistogram(s.histogram);
  Bump((*h)[static_cast<std::size_t>(BucketOf(nanos))], 1);
}

void CommandStats::Rejected(std::uint16_t id) { Bump(Mine().slots[id].rejected, 1); }

CommandTotals CommandStats::Totals(std::uint16_t id) const {
  CommandTotals t;
  std::lock_guard lock(mu_);
  for (const auto& b : blocks_) {
    const Slot& s = b->slots[id];
    t.calls += s.calls.load(std::memory_order_relaxed);
    t.nanos += s.nanos.load(std::memory_order_relaxed);
    t.rejected += s.rejected.load(std::memory_order_relaxed);
    t.failed += s.failed.load(std::memory_order_relaxed);
  }
  return t;
}

std::uint64_t CommandStats::SumHistograms(std::uint16_t id,
                                          std::array<std::uint64_t, kLatencyBuckets>* sum) const {
  std::uint64_t total = 0;
  std::lock_guard lock(mu_);
  for (const auto& b : blocks_) {
    const auto* h = b->slots[id].histogram.load(std::memory_order_acquire);
    if (h == nullptr) continue;
    for (std::size_t i = 0; i < sum->size(); ++i) {
      const std::uint64_t n = (*h)[i].load(std::memory_order_relaxed);
      (*sum)[i] += n;
      total += n;
    }
  }
  return total;
}

std::vector<std::pair<std::int64_t, std::uint64_t>> CommandStats::CumulativeUsec(
    std::uint16_t id) const {
  std::array<std::uint64_t, kLatencyBuckets> sum{};
  const std::uint64_t total = SumHistograms(id, &sum);
  std::vector<std::pair<std::int64_t, std::uint64_t>> out;
  // A bucket of exponent e (16 of them per power of two) ends at or below 2^(e+1) ns, which is
  // Redis's boundary 1024 << (e - 9): the boundaries line up exactly.
  std::uint64_t cumulative = 0;
  std::size_t next = 0;
  for (int k = 0; cumulative < total && next < sum.size(); ++k) {
    const double boundary = static_cast<double>(std::uint64_t{1024} << k);
    while (next < sum.size() && BucketTopNanos(static_cast<int>(next)) <= boundary) {
      cumulative += sum[next++];
    }
    if (cumulative > (out.empty() ? 0 : out.back().second)) {
      out.emplace_back(static_cast<std::int64_t>(((std::uint64_t{1024} << k) - 1) / 1000),
                       cumulative);
    }
  }
  return out;
}

double CommandStats::PercentileUsec(std::uint16_t id, double percentile) const {
  std::array<std::uint64_t, kLatencyBuckets> sum{};
  const std::uint64_t total = SumHistograms(id, &sum);
  if (total == 0) return -1;
  // The smallest bucket at which at least `percentile` percent of the calls are counted.
  const double want = static_cast<double>(total) * percentile / 100.0;
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < sum.size(); ++i) {
    seen += sum[i];
    if (seen > 0 && static_cast<double>(seen) >= want) {
      return BucketTopNanos(static_cast<int>(i)) / 1000.0;
    }
  }
  return BucketTopNanos(kLatencyBuckets - 1) / 1000.0;
}

void CommandStats::Reset() {
  std::lock_guard lock(mu_);
  for (auto& b : blocks_) {
    for (Slot& s : b->slots) {
      s.calls.store(0, std::memory_order_relaxed);
      s.nanos.store(0, std::memory_order_relaxed);
      s.rejected.store(0, std::memory_order_relaxed);
      s.failed.store(0, std::memory_order_relaxed);
      if (auto* h = s.histogram.load(std::memory_order_acquire)) {
        for (auto& n : *h) n.store(0, std::memory_order_relaxed);
      }
    }
  }
}

// flatten: Record and Mine inline here (one call per command instead of three).
[[gnu::flatten]] void RecordCommandCall(const CommandSpec& spec, CommandContext& ctx,
                                        const CommandTimer& timer, std::size_t reply_start) {
  const std::int64_t end = CommandClockNanos();
  CommandBatch::Mark(end);
  const std::int64_t elapsed = end - timer.start;
  const auto nanos = static_cast<std::uint64_t>(elapsed > 0 ? elapsed : 0);
  const std::string* out = ctx.out.buffer();
  const bool failed = out != nullptr && out->size() > reply_start && (*out)[reply_start] == '-';
  ServerState& st = ctx.server;
  if (!st.command_stats) return;
  st.command_stats->Record(spec.stat_id, nanos, failed,
                           st.latency_tracking.load(std::memory_order_relaxed));
  if (st.monitors && st.monitors->active()) st.monitors->Feed(spec, ctx);
  const std::int64_t slower_than = st.slowlog_slower_than.load(std::memory_order_relaxed);
  if (slower_than >= 0 && static_cast<std::int64_t>(nanos / 1000) >= slower_than) {
    SlowlogPush(ctx, spec, nanos / 1000);
  }
  const std::int64_t monitor_ms = st.latency_monitor_threshold.load(std::memory_order_relaxed);
  if (monitor_ms > 0 && static_cast<std::int64_t>(nanos / 1'000'000) >= monitor_ms) {
    LatencySampleIfNeeded(st.latency_monitor.get(), monitor_ms,
                          (spec.flags & kCmdFast) ? "fast-command" : "command",
                          static_cast<std::int64_t>(nanos / 1'000'000), ctx.now.wall_ms / 1000);
  }
}

void RecordCommandRejected(const CommandSpec& spec, CommandContext& ctx) {
  if (ctx.server.command_stats) ctx.server.command_stats->Rejected(spec.stat_id);
}

namespace {
template <class Fn>
void ForEachCommand(const CommandTable& table, Fn&& fn) {
  table.ForEach([&](const CommandSpec& spec) {
    if (spec.IsContainer()) {
      for (const CommandSpec& sub : spec.subcommands) fn(sub);
    } else {
      fn(spec);
    }
  });
}

std::string Fixed(double v, const char* format) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), format, v);
  return buf;
}
}  // namespace

void AppendInfoCommandStats(std::string* out, ServerState& st) {
  if (!st.command_stats || st.commands == nullptr) return;
  ForEachCommand(*st.commands, [&](const CommandSpec& spec) {
    const CommandTotals t = st.command_stats->Totals(spec.stat_id);
    if (t.calls == 0 && t.rejected == 0 && t.failed == 0) return;
    const std::uint64_t usec = t.nanos / 1000;
    const double per_call =
        t.calls == 0 ? 0 : static_cast<double>(usec) / static_cast<double>(t.calls);
    out->append("cmdstat_").append(spec.name).append(":calls=").append(std::to_string(t.calls));
    out->append(",usec=").append(std::to_string(usec));
    out->append(",usec_per_call=").append(Fixed(per_call, "%.2f"));
    out->append(",rejected_calls=").append(std::to_string(t.rejected));
    out->append(",failed_calls=").append(std::to_string(t.failed)).append("\r\n");
  });
}

void AppendInfoLatencyStats(std::string* out, ServerState& st) {
  if (!st.command_stats || st.commands == nullptr) return;
  static constexpr std::pair<const char*, double> kPercentiles[] = {
      {"p50", 50}, {"p99", 99}, {"p99.9", 99.9}};
  ForEachCommand(*st.commands, [&](const CommandSpec& spec) {
    if (st.command_stats->PercentileUsec(spec.stat_id, 50) < 0) return;
    out->append("latency_percentiles_usec_").append(spec.name).append(":");
    bool first = true;
    for (const auto& [label, p] : kPercentiles) {
      if (!first) out->push_back(',');
      first = false;
      out->append(label).append("=").append(
          Fixed(st.command_stats->PercentileUsec(spec.stat_id, p), "%.3f"));
    }
    out->append("\r\n");
  });
}

}  // namespace latch
