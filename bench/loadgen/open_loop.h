#pragma once
// An open-loop HTTP load: requests scheduled at a constant rate from a start time (request k at
// start + k / rate, whatever happened to the ones before), sent on a pool of keep-alive
// HTTP/1.1 connections that grows when every connection is busy, up to a bound; a request
// that finds none free waits in a queue. Latency runs from each request's *scheduled* time, so
// a server that falls behind is charged for the queueing it causes (no coordinated omission).
// One Asio thread runs everything, as in the rest of the load generator.
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "http_scenario.h"
#include "latency_stats.h"

namespace latch::bench {

struct OpenLoopOptions {
  std::string host = "127.0.0.1";
  int port = 0;
  double rate = 100;               // requests per second
  std::int64_t warmup_ms = 2'000;  // sent, not counted
  std::int64_t duration_ms = 10'000;
  std::int64_t timeout_ms = 10'000;  // from the scheduled time: queueing counts
  int connections = 16;              // opened before the start
  int max_connections = 200;         // the seed's 200 virtual users
};

// What the measured window's requests (those scheduled in it) came to. Every one of them ends
// exactly once: completed (any HTTP answer that is not an error) or an error, so
// completed + errors == sent.
struct OpenLoopResult {
  std::int64_t sent = 0;       // scheduled in the window
  std::int64_t written = 0;    // of those, put on the wire
  std::int64_t completed = 0;  // 200/201, and 409 (a refused booking: an answer, not an error)
  std::int64_t conflicts = 0;  // the 409s among completed
  // Answers (200/201/409) received inside the window, to any request: the throughput.
  std::int64_t answered_in_window = 0;
  std::map<std::string, std::int64_t> conflict_codes;  // 409 by `error` code
  // Errors: 5xx, any other status, no answer in time, no connection, a broken connection.
  std::int64_t err_5xx = 0, err_status = 0, err_timeout = 0, err_connect = 0, err_io = 0;
  std::string first_error;
  int max_open = 0;      // connections open at once, at most
  LatencyStats latency;  // completed requests, from the scheduled time
  LatencyStats lag;      // scheduled time -> written (the generator's own delay + queue)
  std::array<LatencyStats, kKinds> by_kind;
  double window_s = 0;

  std::int64_t errors() const { return err_5xx + err_status + err_timeout + err_connect + err_io; }
};

// Runs warmup + duration of the scenario at o.rate. on_phase("measure-start" / "measure-end")
// is called at the window's edges (bench/demo_load.py samples CPU time there).
OpenLoopResult RunOpenLoop(const OpenLoopOptions& o, SeedScenario& scenario,
                           const std::function<void(const char*)>& on_phase);

}  // namespace latch::bench
