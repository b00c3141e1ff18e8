#include <algorithm>
#include <random>

#include "client_runner.h"
#include "command_template.h"
#include "latency_stats.h"
#include "workloads.h"

namespace latch::bench {
namespace {

// Sends `count` requests of `tmpl` ({i} = 0..count-1) over `clients` connections with deep
// pipelines, untimed. Returns the number of error replies.
std::int64_t Prefill(const Options& o, const CommandTemplate& tmpl, std::int64_t count,
                     std::string* first_error) {
  constexpr int kDepth = 128;
  std::int64_t next = 0, errors = 0;
  const auto hard_stop = Clock::now() + std::chrono::seconds(120);
  RunClients(o.host, o.port, std::min(o.clients, 8), hard_stop,
             [&](Connection& c, int) -> asio::awaitable<std::error_code> {
               std::string out;
               while (next < count) {
                 out.clear();
                 const int n = static_cast<int>(std::min<std::int64_t>(kDepth, count - next));
                 for (int k = 0; k < n; ++k) {
                   tmpl.AppendTo({.i = static_cast<std::uint64_t>(next++)}, &out);
                 }
                 auto ec = co_await c.Roundtrip(out, n, [&](const ScannedReply& r) {
                   if (r.cls == ReplyClass::kError && errors++ == 0) {
                     *first_error = std::string(r.error);
                   }
                 });
                 if (ec) co_return ec;
               }
               co_return std::error_code();
             });
  return errors;
}

}  // namespace

std::string RunPipeline(const Options& o) {
  std::string prefill_error;
  std::int64_t prefill_errors = 0;
  if (o.prefill_count > 0 && !o.prefill.empty()) {
    prefill_errors = Prefill(o, CommandTemplate(o.prefill), o.prefill_count, &prefill_error);
  }
  const CommandTemplate tmpl(o.command);
  LatencyStats stats;
  stats.Reserve(static_cast<std::size_t>(o.requests));
  std::int64_t issued = 0;
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::milliseconds(o.duration_ms);
  auto last_reply = start;
  RunOutcome outcome = RunClients(
      o.host, o.port, o.clients, deadline + std::chrono::seconds(2),
      [&](Connection& c, int client) -> asio::awaitable<std::error_code> {
        std::mt19937_64 rng(o.seed * 1'000'003 + static_cast<std::uint64_t>(client));
        std::string out;
        while (issued < o.requests && Clock::now() < deadline) {
          out.clear();
          const int n = static_cast<int>(std::min<std::int64_t>(o.pipeline, o.requests - issued));
          for (int k = 0; k < n; ++k) {
            const auto r = rng() % static_cast<std::uint64_t>(o.keyspace);
            tmpl.AppendTo({.r = r, .i = static_cast<std::uint64_t>(issued++)}, &out);
          }
          const auto t0 = Clock::now();
          auto ec = co_await c.Roundtrip(out, n, [&](const ScannedReply& r) {
            stats.Add(NanosSince(t0));
            stats.Count(r);
          });
          if (ec) co_return ec;
          last_reply = Clock::now();
        }
        co_return std::error_code();
      });
  const double seconds = std::chrono::duration<double>(last_reply - start).count();
  const auto units = static_cast<std::int64_t>(stats.size());
  stats.Finish();
  JsonLine j = Summary(stats, seconds, units);
  j.Num("failed_clients", outcome.failed_clients)
      .Str("failure", outcome.first_failure)
      .Num("prefill_errors", static_cast<double>(prefill_errors))
      .Str("prefill_error", prefill_error);
  return j.str();
}

}  // namespace latch::bench
