#pragma once
// LATCH_TEST_IO_ENGINE=uring (or epoll) runs the servers a suite starts on that io-engine: the
// embedded server's Options and latchd's command line both take it. tests/CMakeLists.txt
// registers the wire suites a second time with it set (label uring).
#include <cstdlib>
#include <string>
#include <vector>

#include "latch/options.h"

namespace latch::test {

// The engine asked for, or empty (the server's default).
inline std::string TestIoEngine() {
  const char* engine = std::getenv("LATCH_TEST_IO_ENGINE");
  return engine == nullptr ? std::string() : std::string(engine);
}

// {"--io-engine", engine} for latchd's command line, or nothing.
inline std::vector<std::string> TestIoEngineArgs() {
  const std::string engine = TestIoEngine();
  if (engine.empty()) return {};
  return {"--io-engine", engine};
}

inline void ApplyTestIoEngine(Options& options) {
  if (const std::string engine = TestIoEngine(); !engine.empty()) options.io_engine = engine;
}

}  // namespace latch::test
