#include <cstdio>
#include <random>

#include "client_runner.h"
#include "command_template.h"
#include "latency_stats.h"
#include "workloads.h"

namespace latch::bench {

std::string RunCycle(const Options& o) {
  const CommandTemplate acquire(o.acquire);
  const CommandTemplate release(o.release);
  LatencyStats stats;  // one sample per completed cycle
  stats.Reserve(static_cast<std::size_t>(o.requests));
  LatencyStats releases;  // reply classes of the releases (all must be "ok")
  std::int64_t started = 0, cycles = 0;
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::milliseconds(o.duration_ms);
  auto last_reply = start;
  RunOutcome outcome = RunClients(
      o.host, o.port, o.clients, deadline + std::chrono::seconds(2),
      [&](Connection& c, int client) -> asio::awaitable<std::error_code> {
        std::mt19937_64 rng(o.seed * 1'000'003 + static_cast<std::uint64_t>(client));
        const std::string owner = OwnerToken(client);
        std::string out;
        char key[32];
        while (started < o.requests && Clock::now() < deadline) {
          ++started;
          const auto r = rng() % static_cast<std::uint64_t>(o.keyspace);
          std::snprintf(key, sizeof key, "lock:%012llu", static_cast<unsigned long long>(r));
          const TemplateVars vars{.r = r, .k = key, .o = owner};
          out.clear();
          acquire.AppendTo(vars, &out);
          const auto t0 = Clock::now();
          bool granted = false;
          auto ec = co_await c.Roundtrip(out, 1, [&](const ScannedReply& rep) {
            granted = rep.cls == ReplyClass::kOk;
            if (!granted) stats.Count(rep);  // refused (nil) or error: no cycle
          });
          if (ec) co_return ec;
          if (granted) {
            out.clear();
            release.AppendTo(vars, &out);
            ec = co_await c.Roundtrip(out, 1, [&](const ScannedReply& rep) {
              releases.Count(rep);
              if (rep.cls == ReplyClass::kOk) {
                stats.Add(NanosSince(t0));
                ++stats.ok;
                ++cycles;
              }
            });
            if (ec) co_return ec;
          }
          last_reply = Clock::now();
        }
        co_return std::error_code();
      });
  const double seconds = std::chrono::duration<double>(last_reply - start).count();
  stats.Finish();
  JsonLine j = Summary(stats, seconds, cycles);
  j.Num("release_ok", static_cast<double>(releases.ok))
      .Num("release_refused", static_cast<double>(releases.zero + releases.nil))
      .Num("release_errors", static_cast<double>(releases.errors))
      .Str("release_error", releases.first_error)
      .Num("commands_per_cycle",
           cycles > 0 ? static_cast<double>(started + releases.ok + releases.zero +
                                            releases.nil + releases.errors) /
                            static_cast<double>(cycles)
                      : 0)
      .Num("failed_clients", outcome.failed_clients)
      .Str("failure", outcome.first_failure);
  return j.str();
}

}  // namespace latch::bench
