#include "metrics/command_stats.h"

#include <cstdio>

#include "catalogue/command_catalogue.h"
#include "metrics/latency_monitor.h"

namespace latch {
namespace {
std::atomic<std::uint64_t> next_instance{1};

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

CommandStats::CommandStats() : instance_(next_instance.fetch_add(1)) {}
CommandStats::~CommandStats() = default;

CommandStats::Block& CommandStats::AddBlock() {
  std::lock_guard lock(mu_);
  blocks_.push_back(std::make_unique<Block>());
  t_cached_block_ = {instance_, blocks_.back().get()};
  return *t_cached_block_.block;
}

CommandStats::Histogram* CommandStats::NewHistogram(std::atomic<Histogram*>& slot) {
  auto* h = new Histogram();
  slot.store(h, std::memory_order_release);
  return h;
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

namespace {
template <class Fn>
void ForEachCommand(const CommandCatalogue& table, Fn&& fn) {
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

void AppendInfoCommandStats(std::string* out, const CommandStats* stats,
                            const CommandCatalogue* catalogue) {
  if (stats == nullptr || catalogue == nullptr) return;
  ForEachCommand(*catalogue, [&](const CommandSpec& spec) {
    const CommandTotals t = stats->Totals(spec.stat_id);
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

void AppendInfoLatencyStats(std::string* out, const CommandStats* stats,
                            const CommandCatalogue* catalogue) {
  if (stats == nullptr || catalogue == nullptr) return;
  static constexpr std::pair<const char*, double> kPercentiles[] = {
      {"p50", 50}, {"p99", 99}, {"p99.9", 99.9}};
  ForEachCommand(*catalogue, [&](const CommandSpec& spec) {
    if (stats->PercentileUsec(spec.stat_id, 50) < 0) return;
    out->append("latency_percentiles_usec_").append(spec.name).append(":");
    bool first = true;
    for (const auto& [label, p] : kPercentiles) {
      if (!first) out->push_back(',');
      first = false;
      out->append(label).append("=").append(Fixed(stats->PercentileUsec(spec.stat_id, p), "%.3f"));
    }
    out->append("\r\n");
  });
}

}  // namespace latch
