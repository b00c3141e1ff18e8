#pragma once
// Small helpers shared by the wire tests: the raw bytes of a bulk reply, and a bounded poll
// for effects of the server's periodic tick (active expiry, idle timeout, lock hand-off on
// expiry), which runs on real time whatever the manual clock says.
#include <chrono>
#include <string>
#include <string_view>
#include <thread>

namespace latch::test {

inline std::string Bulk(std::string_view s) {
  return "$" + std::to_string(s.size()) + "\r\n" + std::string(s) + "\r\n";
}

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
