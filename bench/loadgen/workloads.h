#pragma once
// The load generator's workloads. Each runs to its count or its deadline, whichever comes
// first, on one thread (as redis-benchmark does), and returns its result as one JSON object.
#include <string>

#include "options.h"

namespace latch::bench {

// Closed loop of `command`: every client keeps `pipeline` requests in flight per round trip.
// Latency of a request: from the write of its batch to its reply. Units: requests.
std::string RunPipeline(const Options& o);

// Per client: `acquire` a random key ({k} = lock:<r>) and, when granted, `release` it.
// Latency: the whole cycle. Units: completed cycles; refused acquires count as "nil".
std::string RunCycle(const Options& o);

// All clients want one key: acquire, hold hold_ms, release. A refused acquire is retried after
// a pause drawn from [retry_min_ms, retry_max_ms]. Reports grants per second, commands per
// grant, handoff latency (a release sent -> the next grant received) and acquire latency
// (first attempt -> grant), and counts overlapping grants (must be 0). Units: grants.
std::string RunHandoff(const Options& o);

}  // namespace latch::bench
