#pragma once
// The one way a test waits for something to happen: poll a condition until a deadline.
// A test never sleeps for a guessed time instead: on a loaded machine the guess is too short
// (a flaky failure) and on a quiet one too long. Real time passes here only while the
// condition is false, and the deadline only decides how long a failing test takes.
#include <chrono>
#include <thread>

namespace latch::test {

// Polls `cond` every 5 ms for at most `limit` of real time; returns its last value.
template <class Cond>
bool Eventually(Cond cond, std::chrono::milliseconds limit = std::chrono::milliseconds(3000)) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return cond();
}

}  // namespace latch::test
