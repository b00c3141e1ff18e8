// latch_httpload: the seed's request mix against the reservation demo, open loop: a constant
// arrival rate, latency from each request's scheduled time (see open_loop.h). bench/demo_load.py
// --paced runs it; by hand:
//
//   latch_httpload --port P --scenario FILE --rate 1426 --seconds 60
//       [--warmup-ms 2000] [--timeout-ms 10000] [--connections 16] [--max-connections 200]
//       [--seed 1] [--host 127.0.0.1]
//
// FILE is the mix (http_scenario.h; demo_load.py writes it after creating the event). Prints
// `phase measure-start` and `phase measure-end` at the measured window's edges, then one JSON
// object: sent, written, completed, errors (err_5xx, err_status, err_timeout, err_connect,
// err_io), conflicts (409s, an expected answer; c409_<code> each), achieved_rps (answers
// received during the window / its length: the throughput), p50/p95/p99/max_ms of the completed
// requests, lag_p99_ms (scheduled -> written), max_open connections, and n/p50/p99 per kind of
// request. Exit status: 0 when the run completed (errors are in the JSON), 2 on a bad command line.
#include <charconv>
#include <cstdio>
#include <string>
#include <string_view>

#include "http_scenario.h"
#include "open_loop.h"

namespace {

using latch::bench::OpenLoopOptions;

bool ParseArgs(int argc, char** argv, OpenLoopOptions* o, std::string* scenario,
               std::uint64_t* seed, std::string* error) {
  for (int i = 1; i < argc; i += 2) {
    const std::string_view name = argv[i];
    if (i + 1 >= argc) {
      *error = "missing value after " + std::string(name);
      return false;
    }
    const std::string_view value = argv[i + 1];
    double v = 0;
    auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    const bool number = ec == std::errc() && p == value.data() + value.size() && v >= 0;
    auto whole = [&](auto* field, double min) {
      if (!number || v < min || v != static_cast<double>(static_cast<std::int64_t>(v))) {
        *error = std::string(name) + " needs an integer >= " + std::to_string(min);
        return false;
      }
      *field = static_cast<std::remove_pointer_t<decltype(field)>>(v);
      return true;
    };
    bool ok = true;
    if (name == "--host")
      o->host = value;
    else if (name == "--scenario")
      *scenario = value;
    else if (name == "--port")
      ok = whole(&o->port, 1) && o->port < 65536;
    else if (name == "--rate")
      ok = number && (o->rate = v) > 0 && v <= 1e6;
    else if (name == "--seconds")
      ok = number && v > 0 && (o->duration_ms = std::int64_t(v * 1000));
    else if (name == "--warmup-ms")
      ok = whole(&o->warmup_ms, 0);
    else if (name == "--timeout-ms")
      ok = whole(&o->timeout_ms, 1);
    else if (name == "--connections")
      ok = whole(&o->connections, 0);
    else if (name == "--max-connections")
      ok = whole(&o->max_connections, 1);
    else if (name == "--seed")
      ok = whole(seed, 0);
    else {
      *error = "unknown option " + std::string(name);
      return false;
    }
    if (!ok) {
      if (error->empty()) *error = "bad value for " + std::string(name);
      return false;
    }
  }
  if (o->port == 0 || scenario->empty()) {
    *error = "--port and --scenario are required";
    return false;
  }
  if (o->connections > o->max_connections) o->connections = o->max_connections;
  return true;
}

std::string Report(const OpenLoopOptions& o, const latch::bench::OpenLoopResult& r) {
  using latch::bench::JsonLine;
  const auto ms = [](const latch::bench::LatencyStats& s, double q) {
    return s.PercentileUs(q) / 1000.0;
  };
  JsonLine j;
  j.Num("rate", o.rate)
      .Num("window_s", r.window_s)
      .Num("sent", static_cast<double>(r.sent))
      .Num("written", static_cast<double>(r.written))
      .Num("completed", static_cast<double>(r.completed))
      .Num("errors", static_cast<double>(r.errors()))
      .Num("err_5xx", static_cast<double>(r.err_5xx))
      .Num("err_status", static_cast<double>(r.err_status))
      .Num("err_timeout", static_cast<double>(r.err_timeout))
      .Num("err_connect", static_cast<double>(r.err_connect))
      .Num("err_io", static_cast<double>(r.err_io))
      .Num("conflicts", static_cast<double>(r.conflicts))
      .Num("achieved_rps",
           r.window_s > 0 ? static_cast<double>(r.answered_in_window) / r.window_s : 0)
      .Num("p50_ms", ms(r.latency, 0.50))
      .Num("p95_ms", ms(r.latency, 0.95))
      .Num("p99_ms", ms(r.latency, 0.99))
      .Num("max_ms", ms(r.latency, 1.0))
      .Num("lag_p99_ms", ms(r.lag, 0.99))
      .Num("lag_max_ms", ms(r.lag, 1.0))
      .Num("max_open", r.max_open);
  for (const auto& [code, n] : r.conflict_codes) j.Num("c409_" + code, static_cast<double>(n));
  for (int k = 0; k < latch::bench::kKinds; ++k) {
    const auto& s = r.by_kind[static_cast<std::size_t>(k)];
    const std::string name = latch::bench::KindName(static_cast<latch::bench::Kind>(k));
    j.Num(name + "_n", static_cast<double>(s.size()))
        .Num(name + "_p50_ms", ms(s, 0.50))
        .Num(name + "_p99_ms", ms(s, 0.99));
  }
  j.Str("first_error", r.first_error);
  return j.str();
}

}  // namespace

int main(int argc, char** argv) {
  OpenLoopOptions o;
  std::string scenario_path, error;
  std::uint64_t seed = 1;
  if (!ParseArgs(argc, argv, &o, &scenario_path, &seed, &error)) {
    std::fprintf(stderr, "latch_httpload: %s\n", error.c_str());
    return 2;
  }
  latch::bench::ScenarioSpec spec;
  if (!latch::bench::LoadScenario(scenario_path, &spec, &error)) {
    std::fprintf(stderr, "latch_httpload: %s\n", error.c_str());
    return 2;
  }
  latch::bench::SeedScenario scenario(std::move(spec), seed);
  const auto result = latch::bench::RunOpenLoop(o, scenario, [](const char* phase) {
    std::printf("phase %s\n", phase);
    std::fflush(stdout);
  });
  std::printf("%s\n", Report(o, result).c_str());
  return 0;
}
