#pragma once
// The well-behaved client of the robustness suite: on its own thread and connection it
// runs a lock client's day (SET NX PX, GET, LOCK.ACQUIRE, LOCK.RELEASE) every 2 ms and
// times every reply, until stopped. A wrong or missing reply counts as a failure.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace latch::test {

class RobustProbe {
 public:
  explicit RobustProbe(int port);
  ~RobustProbe();
  RobustProbe(const RobustProbe&) = delete;
  RobustProbe& operator=(const RobustProbe&) = delete;

  // Stops the thread (idempotent); the numbers below are final afterwards.
  void Stop();
  std::size_t samples() const;
  double PercentileMs(double p) const;  // p in [0, 100]
  double MaxMs() const;
  int failures() const { return failures_.load(); }
  // While set, a BUSY reply (a script past busy-reply-threshold) counts as an answer: it is
  // timed like any other and the rest of that round is skipped (its release may depend on
  // the acquire BUSY refused).
  void set_busy_is_answer(bool yes) { busy_is_answer_ = yes; }
  int busy_replies() const { return busy_replies_.load(); }
  std::string first_failure() const;

 private:
  void Run(int port);

  std::atomic<bool> stop_{false};
  std::atomic<int> failures_{0};
  std::atomic<bool> busy_is_answer_{false};
  std::atomic<int> busy_replies_{0};
  mutable std::mutex mu_;
  std::vector<double> latencies_ms_;
  std::string first_failure_;
  std::thread thread_;
};

}  // namespace latch::test
