#include "commands/latency_doctor.h"

#include <cstdio>
#include <cstdlib>

namespace latch {
namespace {

// One numbered line per event: spikes, average, mean deviation, period, worst.
std::string EventLine(std::size_t n, const LatencyEvent& e) {
  std::int64_t sum = 0;
  for (const LatencySample& s : e.samples) sum += s.ms;
  const auto count = static_cast<std::int64_t>(e.samples.size());
  const std::int64_t avg = sum / count;
  std::int64_t dev = 0;
  for (const LatencySample& s : e.samples) dev += std::llabs(s.ms - avg);
  dev /= count;
  const double period =
      count > 1
          ? static_cast<double>(e.samples.back().unix_seconds - e.samples.front().unix_seconds) /
                static_cast<double>(count - 1)
          : 0.0;
  char buf[512];
  std::snprintf(buf, sizeof(buf),
                "%zu. %s: %lld spikes, average %lld ms (mean deviation %lld ms), one every "
                "%.2f s; worst ever %lld ms.\n",
                n, e.name.c_str(), static_cast<long long>(count), static_cast<long long>(avg),
                static_cast<long long>(dev), period, static_cast<long long>(e.max_ms));
  return buf;
}

std::string Advice(const std::string& event) {
  if (event == "command" || event == "fast-command") {
    return "- " + event +
           ": SLOWLOG GET lists the slow commands and their arguments; a long script, "
           "KEYS or a large DEL holds the shards it touches for as long as it runs.\n";
  }
  if (event == "expire-cycle") {
    return "- expire-cycle: many keys reached their deadline at once; spreading the TTLs "
           "(a random part added to each) spreads the reclaiming.\n";
  }
  return "";
}
}  // namespace

std::string LatencyDoctorReport(const std::vector<LatencyEvent>& events,
                                std::int64_t threshold_ms) {
  if (events.empty() && threshold_ms == 0) {
    return "I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis "
           "instance. You may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in "
           "order to enable it. If we weren't in a deep space mission I'd suggest to take a "
           "look at https://redis.io/topics/latency-monitor.\n";
  }
  if (events.empty()) {
    return "Dave, no latency spike was observed during the lifetime of this Redis instance, "
           "not in the slightest bit. I honestly think you ought to sleep tonight.\n";
  }
  std::string out = "latchd saw latency spikes (events of " + std::to_string(threshold_ms) +
                    " ms or more, latency-monitor-threshold):\n\n";
  for (std::size_t i = 0; i < events.size(); ++i) out += EventLine(i + 1, events[i]);
  out += "\nWhere to look:\n\n";
  for (const LatencyEvent& e : events) out += Advice(e.name);
  out += "\nLATENCY HISTORY <event> lists the samples; LATENCY RESET forgets them.\n";
  return out;
}

}  // namespace latch
