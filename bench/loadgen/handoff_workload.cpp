#include <optional>
#include <random>

#include "client_runner.h"
#include "command_template.h"
#include "latency_stats.h"
#include "workloads.h"

namespace latch::bench {

std::string RunHandoff(const Options& o) {
  const CommandTemplate acquire(o.acquire);
  const CommandTemplate release(o.release);
  const std::string key = "lock:handoff";
  LatencyStats handoff;  // a release sent -> the next grant received
  LatencyStats waited;   // a client's first attempt -> its grant
  LatencyStats replies;  // classes of every acquire and release reply
  std::int64_t grants = 0, commands = 0, acquires = 0, overlaps = 0;
  bool held = false;  // a client holds the lock (from grant received to release sent)
  std::optional<Clock::time_point> released_at;
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::milliseconds(o.duration_ms);
  auto end = start;
  // Clients parked in a blocking acquire are released by the watchdog at the deadline.
  RunOutcome outcome = RunClients(
      o.host, o.port, o.clients, deadline,
      [&](Connection& c, int client) -> asio::awaitable<std::error_code> {
        std::mt19937_64 rng(o.seed * 1'000'003 + static_cast<std::uint64_t>(client));
        const std::string owner = OwnerToken(client);
        const TemplateVars vars{.k = key, .o = owner};
        std::string acquire_req, release_req;
        acquire.AppendTo(vars, &acquire_req);
        release.AppendTo(vars, &release_req);
        asio::steady_timer timer(co_await asio::this_coro::executor);
        while (grants < o.requests && Clock::now() < deadline) {
          const auto first_try = Clock::now();
          bool granted = false;
          // Bounded by the deadline: each refused attempt costs a round trip or a pause.
          while (!granted && grants < o.requests && Clock::now() < deadline) {
            // Counted on the reply: an acquire still parked at the deadline is not a cost.
            auto ec = co_await c.Roundtrip(acquire_req, 1, [&](const ScannedReply& r) {
              ++commands;
              ++acquires;
              replies.Count(r);
              granted = r.cls == ReplyClass::kOk;
            });
            if (ec) co_return ec;
            if (granted || o.retry_max_ms == 0) continue;
            std::uniform_int_distribution<std::int64_t> pause(o.retry_min_ms, o.retry_max_ms);
            timer.expires_after(std::chrono::milliseconds(pause(rng)));
            co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
          }
          if (!granted) break;
          const auto now = Clock::now();
          if (now >= deadline) break;  // the grant came too late to count
          ++grants;
          if (held) ++overlaps;
          held = true;
          if (released_at) handoff.Add((now - *released_at).count());
          released_at.reset();
          waited.Add((now - first_try).count());
          timer.expires_after(std::chrono::milliseconds(o.hold_ms));
          co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
          held = false;
          released_at = Clock::now();
          ++commands;
          auto ec = co_await c.Roundtrip(release_req, 1,
                                         [&](const ScannedReply& r) { replies.Count(r); });
          if (ec) co_return ec;
          end = Clock::now();
        }
        co_return std::error_code();
      });
  const double seconds = std::chrono::duration<double>(end - start).count();
  handoff.Finish();
  waited.Finish();
  JsonLine j;
  j.Num("seconds", seconds)
      .Num("units", static_cast<double>(grants))
      .Num("rps", seconds > 0 ? static_cast<double>(grants) / seconds : 0)
      .Num("p50_us", handoff.PercentileUs(0.50))
      .Num("p99_us", handoff.PercentileUs(0.99))
      .Num("wait_p50_us", waited.PercentileUs(0.50))
      .Num("wait_p99_us", waited.PercentileUs(0.99))
      .Num("commands", static_cast<double>(commands))
      .Num("commands_per_grant",
           grants > 0 ? static_cast<double>(commands) / static_cast<double>(grants) : 0)
      .Num("acquires_per_grant",
           grants > 0 ? static_cast<double>(acquires) / static_cast<double>(grants) : 0)
      .Num("overlapping_grants", static_cast<double>(overlaps))
      .Num("errors", static_cast<double>(replies.errors))
      .Str("first_error", replies.first_error)
      .Num("failed_clients", outcome.failed_clients)
      .Str("failure", outcome.first_failure);
  return j.str();
}

}  // namespace latch::bench
