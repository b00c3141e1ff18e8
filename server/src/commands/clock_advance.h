#pragma once
// Moving the server's manual clock: TEST.CLOCK, DEBUG ADVANCE-CLOCK and ScopedServer::Advance
// all come here. After the move, every shard's due keys are expired and due lock waiters
// answered at once (what the worker tick would do within its period), so that when the call
// returns, TTLs, hand-offs and WAIT timeouts have all moved exactly by `ms`.
#include <cstdint>
#include <optional>
#include <string>

namespace latch {

struct ServerState;
class ManualClock;

// The server's ManualClock, or null when it runs on the system clock.
ManualClock* ManualClockOf(ServerState& server);
// Both return the error reply when the server has no manual clock or `ms` is refused
// (negative for Advance); nullopt when the clock moved.
std::optional<std::string> AdvanceClock(ServerState& server, std::int64_t ms);
// The wall clock only: a relative TTL neither shortens nor lengthens (may be negative).
std::optional<std::string> StepWallClock(ServerState& server, std::int64_t ms);

}  // namespace latch
