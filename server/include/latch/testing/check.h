#pragma once
// The outcome of a ScopedServer::Check* helper: ok, or a message that shows what differed.
// Usable without GoogleTest (`if (!r) std::cerr << r.message`); gtest.h adds EXPECT_LATCH.
#include <string>
#include <utility>

namespace latch::testing {

struct CheckResult {
  bool ok = true;
  std::string message;  // empty when ok
  explicit operator bool() const { return ok; }
  static CheckResult Ok() { return {}; }
  static CheckResult Fail(std::string why) { return {false, std::move(why)}; }
};

}  // namespace latch::testing
