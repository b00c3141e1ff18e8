// latch_loadgen: the load generator bench/run.py uses where redis-benchmark cannot express a
// workload (prefilled releases, lock cycles, contended handoff). Prints one JSON object.
//
//   latch_loadgen --mode pipeline --port P --clients 50 --pipeline 16 --requests 200000
//       --prefill 'SET lock:{i} tok PX 600000' --prefill-count 200000
//       --command 'EVALSHA <sha> 1 lock:{i} tok'
//   latch_loadgen --mode cycle --port P --acquire 'SET {k} {o} NX PX 30000'
//       --release 'DELEX {k} IFEQ {o}'
//   latch_loadgen --mode handoff --port P --clients 100 --hold-ms 1
//       --acquire 'LOCK.ACQUIRE {k} {o} 5000 WAIT 1000' --release 'LOCK.RELEASE {k} {o}'
//
// Exit status: 0 when the run completed (replies may still be errors: see the JSON), 2 on a
// bad command line.
#include <cstdio>
#include <string>

#include "options.h"
#include "workloads.h"

int main(int argc, char** argv) {
  latch::bench::Options o;
  std::string error;
  if (!latch::bench::ParseOptions(argc, argv, &o, &error)) {
    std::fprintf(stderr, "latch_loadgen: %s\n", error.c_str());
    return 2;
  }
  std::string result;
  switch (o.mode) {
    case latch::bench::Mode::kPipeline: result = latch::bench::RunPipeline(o); break;
    case latch::bench::Mode::kCycle: result = latch::bench::RunCycle(o); break;
    case latch::bench::Mode::kHandoff: result = latch::bench::RunHandoff(o); break;
  }
  std::printf("%s\n", result.c_str());
  return 0;
}
