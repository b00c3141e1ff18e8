#pragma once
// Command line of latch_loadgen. Every workload is bounded twice: by a count (requests,
// cycles) and by a wall-clock limit (duration_ms), whichever comes first.
#include <cstdint>
#include <string>

namespace latch::bench {

enum class Mode {
  kPipeline,  // closed loop: each client sends `pipeline` requests, waits for all replies
  kCycle,     // each client: acquire a key of its own, release it, repeat
  kHandoff,   // all clients contend for one lock, hold it hold_ms, release, repeat
};

struct Options {
  Mode mode = Mode::kPipeline;
  std::string host = "127.0.0.1";
  int port = 0;
  int clients = 50;
  int pipeline = 1;
  std::int64_t requests = 100'000;  // pipeline: requests; cycle: cycles; handoff: grants
  std::int64_t duration_ms = 10'000;
  std::int64_t keyspace = 100'000;  // range of {r}
  std::uint64_t seed = 1;
  // Pipeline mode: the request template (see command_template.h) and an optional prefill
  // run before the clock starts: prefill_count requests of `prefill`, {i} = 0..count-1.
  std::string command;
  std::string prefill;
  std::int64_t prefill_count = 0;
  // Cycle and handoff modes: acquire and release templates ({k}: the key, {o}: the owner).
  std::string acquire;
  std::string release;
  // Handoff mode: time a holder keeps the lock, and the jittered pause after a refused
  // acquire (0/0 = retry at once, i.e. a blocking acquire that timed out).
  std::int64_t hold_ms = 1;
  std::int64_t retry_min_ms = 0;
  std::int64_t retry_max_ms = 0;
};

// Parses `--name value` pairs. On a bad command line, returns false with a message in *error.
bool ParseOptions(int argc, char** argv, Options* out, std::string* error);

}  // namespace latch::bench
