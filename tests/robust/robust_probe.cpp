#include "robust/robust_probe.h"

#include <algorithm>

#include "support/raw_connection.h"

namespace latch::test {

RobustProbe::RobustProbe(int port) : thread_([this, port] { Run(port); }) {}

RobustProbe::~RobustProbe() { Stop(); }

void RobustProbe::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void RobustProbe::Run(int port) {
  using SteadyClock = std::chrono::steady_clock;
  RawConnection c(port, std::chrono::milliseconds(2000));
  struct Step {
    std::vector<std::string> args;
    std::string expect_prefix;
  };
  // Set when BUSY cut a round short: the lock may still be ours, so the next round
  // releases it first and takes any integer reply.
  bool release_pending = false;
  for (std::uint64_t i = 0; !stop_; ++i) {
    const std::string key = "probe:" + std::to_string(i % 64);
    std::vector<Step> steps;
    if (release_pending) steps.push_back({{"LOCK.RELEASE", "probe-lock", "me"}, ":"});
    steps.push_back({{"SET", key, "v", "NX", "PX", "10000"}, ""});  // +OK or $-1: both fine
    steps.push_back({{"GET", key}, "$"});
    steps.push_back({{"LOCK.ACQUIRE", "probe-lock", "me", "5000"}, ":"});
    steps.push_back({{"LOCK.RELEASE", "probe-lock", "me"}, ":1"});
    release_pending = false;
    for (const Step& step : steps) {
      const auto start = SteadyClock::now();
      const std::string reply = c.CommandArgs(step.args);
      const double ms =
          std::chrono::duration<double, std::milli>(SteadyClock::now() - start).count();
      std::lock_guard lock(mu_);
      latencies_ms_.push_back(ms);
      if (busy_is_answer_ && reply.rfind("-BUSY ", 0) == 0) {
        ++busy_replies_;
        release_pending = true;
        break;
      }
      const bool ok = reply.rfind("<no reply", 0) != 0 && reply.rfind(step.expect_prefix, 0) == 0;
      if (!ok && failures_++ == 0) first_failure_ = step.args[0] + " -> " + reply;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

std::size_t RobustProbe::samples() const {
  std::lock_guard lock(mu_);
  return latencies_ms_.size();
}

double RobustProbe::PercentileMs(double p) const {
  std::lock_guard lock(mu_);
  if (latencies_ms_.empty()) return 0;
  std::vector<double> sorted = latencies_ms_;
  std::sort(sorted.begin(), sorted.end());
  const auto index = static_cast<std::size_t>(p / 100.0 * static_cast<double>(sorted.size() - 1));
  return sorted[index];
}

double RobustProbe::MaxMs() const { return PercentileMs(100); }

std::string RobustProbe::first_failure() const {
  std::lock_guard lock(mu_);
  return first_failure_;
}

}  // namespace latch::test
