#pragma once
// The one list of latchd's counters and gauges. Each entry says once what a number is called
// in INFO and in /metrics, its help text and kind, its INFO section and whether CONFIG
// RESETSTAT zeroes it; INFO (server_commands.cpp), the Prometheus text (metrics_text.cpp)
// and RESETSTAT all iterate this list, so a new counter is declared in one place.
//
// The numbers themselves stay where the code that bumps them lives (Stats in server_state.h,
// store::LockStats, the keyspace): an entry reads them. Adding a counter: add the field
// there, bump it, add its entry to kStats in stats_registry.cpp.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace latch {

struct ServerState;

enum class StatKind { kCounter, kGauge };
// INFO sections that list registry entries, in the order INFO prints them.
enum class InfoSection { kNone, kClients, kMemory, kStats, kLocks };

struct StatDef {
  std::string_view info;    // INFO field; empty: only in /metrics
  std::string_view metric;  // Prometheus name; empty: only in INFO
  std::string_view help;    // Prometheus HELP text
  StatKind kind;
  InfoSection section;
  std::uint64_t (*read)(ServerState&);
  // How CONFIG RESETSTAT zeroes it; null when it does not (gauges, configuration values).
  void (*reset)(ServerState&) = nullptr;
  double metric_divisor = 1;  // /metrics shows read() / metric_divisor (uptime: ms -> s)
};

std::span<const StatDef> StatDefs();

// The "field:value\r\n" lines of one INFO section's registry entries.
void AppendInfoStats(std::string* out, ServerState& st, InfoSection section);
// The lines of INFO errorstats ("errorstat_ERR:count=3"), codes in byte order.
void AppendInfoErrorStats(std::string* out, ServerState& st);
// CONFIG RESETSTAT: what Redis 7.0's resets (connections, commands, net bytes, rejected
// connections, expired keys, hits, misses, error replies and errorstats), plus latchd's
// own counters (protocol errors, lock counters). Gauges are left alone.
void ResetStats(ServerState& st);

}  // namespace latch
