// ScopedServer: time, counters and faults.
#include <stdexcept>

#include "commands/clock_advance.h"
#include "latch/testing/scoped_server.h"
#include "server_state.h"

namespace latch {
ServerState& InternalState(Server& server);  // server.cpp
}  // namespace latch

namespace latch::testing {

void ScopedServer::Advance(Millis ms) {
  if (auto error = AdvanceClock(InternalState(*server_), ms.count())) {
    throw std::logic_error("latch::testing::Advance: " + *error);
  }
}

void ScopedServer::StepWall(Millis ms) {
  if (auto error = StepWallClock(InternalState(*server_), ms.count())) {
    throw std::logic_error("latch::testing::StepWall: " + *error);
  }
}

Counters ScopedServer::counters() {
  ServerState& s = InternalState(*server_);
  Counters c;
  c.connections_total = s.stats.total_connections.load();
  c.connected_clients = s.clients.count();
  c.commands_total = s.stats.total_commands.load();
  c.commands = s.faults.command_counts();
  c.lock_grants = s.locks.stats().grants.load(std::memory_order_relaxed);
  c.lock_handoffs = s.locks.stats().handoffs.load(std::memory_order_relaxed);
  c.faults = s.faults.counts();
  return c;
}

std::uint64_t ScopedServer::CommandCount(std::string_view name) {
  std::string lower(name);
  for (char& ch : lower) ch = static_cast<char>(ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch);
  const auto counts = InternalState(*server_).faults.command_counts();
  const auto it = counts.find(lower);
  return it == counts.end() ? 0 : it->second;
}

std::uint64_t ScopedServer::InjectFault(FaultRule rule) {
  return InternalState(*server_).faults.Arm(std::move(rule));
}

void ScopedServer::Pause(Millis ms) { InternalState(*server_).faults.Pause(ms.count()); }
void ScopedServer::ClearFaults() { InternalState(*server_).faults.Clear(); }
void ScopedServer::ResetFaults() { InternalState(*server_).faults.Reset(); }

}  // namespace latch::testing
