#include "commands/clock_advance.h"

#include <limits>
#include <mutex>

#include "latch/clock.h"
#include "server_state.h"
#include "store/shard_guard.h"

namespace latch {
namespace {

constexpr const char* kNotManual =
    "ERR the server runs on the system clock; start latchd with --clock manual";

// What the worker tick does (the access clock, expiry, lock-wait timeouts), for every
// shard now and without a budget. A shard held by a script is waited for (the tick would
// skip it and catch up later); one this thread holds already (the clock moved inside EXEC,
// which holds every shard) is swept without locking it again.
void SweepDue(ServerState& server) {
  const std::int64_t now = server.clock->MonoMs();
  const int n = server.dbs.created() * server.dbs.shards_per_db();
  for (int i = 0; i < n; ++i) {
    store::Shard& shard = *server.dbs.ShardAt(i);
    shard.TickAccessClock(now);
    const store::ShardGuard guard(shard);
    shard.ExpireDue(now, std::numeric_limits<std::size_t>::max());
    server.locks.ForShard(i).TimeOutWaiters(now);
  }
}

}  // namespace

ManualClock* ManualClockOf(ServerState& server) {
  return dynamic_cast<ManualClock*>(server.clock.get());
}

std::optional<std::string> AdvanceClock(ServerState& server, std::int64_t ms) {
  ManualClock* manual = ManualClockOf(server);
  if (manual == nullptr) return std::string(kNotManual);
  if (ms < 0) return std::string("ERR the clock only moves forward; use STEPWALL to step back");
  manual->advance(ms);
  SweepDue(server);
  return std::nullopt;
}

std::optional<std::string> StepWallClock(ServerState& server, std::int64_t ms) {
  ManualClock* manual = ManualClockOf(server);
  if (manual == nullptr) return std::string(kNotManual);
  manual->step_wall(ms);
  return std::nullopt;
}

}  // namespace latch
