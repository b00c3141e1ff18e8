#include "report/stats_registry.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>

#include "metrics/acl_counters.h"
#include "metrics/command_stats.h"
#include "server_state.h"

namespace latch {
namespace {

using store::LockStats;

std::uint64_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  std::uint64_t pages_total = 0, pages_resident = 0;
  statm >> pages_total >> pages_resident;
  return pages_resident * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
}

// A Stats counter that RESETSTAT zeroes.
template <StripedCounter Stats::*F>
constexpr StatDef Counter(std::string_view info, std::string_view metric, std::string_view help,
                          InfoSection section) {
  return {info,
          metric,
          help,
          StatKind::kCounter,
          section,
          [](ServerState& s) { return (s.stats.*F).load(); },
          [](ServerState& s) { s.stats.*F = 0; }};
}

// A lock counter (store::LockStats) that RESETSTAT zeroes.
template <std::atomic<std::uint64_t> LockStats::*F>
constexpr StatDef LockCounter(std::string_view info, std::string_view metric,
                              std::string_view help) {
  return {info,
          metric,
          help,
          StatKind::kCounter,
          InfoSection::kLocks,
          [](ServerState& s) { return (s.locks.stats().*F).load(std::memory_order_relaxed); },
          [](ServerState& s) { (s.locks.stats().*F).store(0, std::memory_order_relaxed); }};
}

constexpr StatDef Gauge(std::string_view info, std::string_view metric, std::string_view help,
                        InfoSection section, std::uint64_t (*read)(ServerState&)) {
  return {info, metric, help, StatKind::kGauge, section, read};
}

std::uint64_t LockWaiters(ServerState& s) {
  // Parked-waiter count can dip below 0 for a moment while a grant and a timeout race.
  return static_cast<std::uint64_t>(
      std::max<std::int64_t>(0, s.locks.stats().waiters.load(std::memory_order_relaxed)));
}

// An ACL refusal counter (metrics/acl_counters.h) that RESETSTAT zeroes, as Redis 7.0's.
template <std::atomic<std::uint64_t> AclDenialCounters::*F>
constexpr StatDef AclCounter(std::string_view info, std::string_view metric,
                             std::string_view help) {
  return {info,
          metric,
          help,
          StatKind::kCounter,
          InfoSection::kStats,
          [](ServerState& s) { return ((*s.acl_denials).*F).load(std::memory_order_relaxed); },
          [](ServerState& s) { ((*s.acl_denials).*F).store(0, std::memory_order_relaxed); }};
}

// The keyspace counts expiries per shard and never resets them: RESETSTAT remembers the
// total at the reset instead.
std::uint64_t ExpiredKeys(ServerState& s) {
  const std::uint64_t total = s.dbs.TotalExpired();
  const std::uint64_t base = s.stats.expired_keys_at_reset.load(std::memory_order_relaxed);
  return total > base ? total - base : 0;
}

constexpr auto kClients = InfoSection::kClients;
constexpr auto kMemory = InfoSection::kMemory;
constexpr auto kStatsSection = InfoSection::kStats;
constexpr auto kNone = InfoSection::kNone;

// In INFO order within each section; /metrics lists them in this order.
// clang-format off
const StatDef kStats[] = {
    {"", "latch_uptime_seconds", "Seconds since the server started.", StatKind::kGauge, kNone,
     [](ServerState& s) {
       return static_cast<std::uint64_t>(s.clock->MonoMs() - s.start_mono_ms);
     },
     nullptr, 1000},
    Gauge("connected_clients", "latch_connected_clients", "Client connections open now.",
          kClients, [](ServerState& s) { return std::uint64_t{s.clients.count()}; }),
    Gauge("maxclients", "", "", kClients,
          [](ServerState& s) { return static_cast<std::uint64_t>(s.maxclients.load()); }),
    // Clients parked by LOCK.ACQUIRE ... WAIT are latchd's blocked clients.
    Gauge("blocked_clients", "", "", kClients, LockWaiters),
    Gauge("used_memory", "latch_used_memory_bytes", "Bytes in use: malloc heap and key slabs.",
          kMemory, [](ServerState&) { return std::uint64_t{store::UsedMemoryBytes()}; }),
    Gauge("used_memory_rss", "", "", kMemory, [](ServerState&) { return ResidentBytes(); }),
    Gauge("maxmemory", "", "", kMemory,
          [](ServerState& s) { return static_cast<std::uint64_t>(s.maxmemory.load()); }),
    Counter<&Stats::total_connections>("total_connections_received",
                                       "latch_connections_received_total",
                                       "Connections accepted.", kStatsSection),
    Counter<&Stats::total_commands>("total_commands_processed", "latch_commands_processed_total",
                                    "Commands run.", kStatsSection),
    Counter<&Stats::net_input_bytes>("total_net_input_bytes", "latch_net_input_bytes_total",
                                     "Bytes read from clients.", kStatsSection),
    Counter<&Stats::net_output_bytes>("total_net_output_bytes", "latch_net_output_bytes_total",
                                      "Bytes written to clients.", kStatsSection),
    Counter<&Stats::rejected_connections>("rejected_connections",
                                          "latch_connections_rejected_total",
                                          "Connections refused because of maxclients.",
                                          kStatsSection),
    {"expired_keys", "latch_expired_keys_total", "Keys removed because their TTL ran out.",
     StatKind::kCounter, kStatsSection, ExpiredKeys,
     [](ServerState& s) { s.stats.expired_keys_at_reset = s.dbs.TotalExpired(); }},
    Counter<&Stats::keyspace_hits>("keyspace_hits", "latch_keyspace_hits_total",
                                   "Lookups that found their key.", kStatsSection),
    Counter<&Stats::keyspace_misses>("keyspace_misses", "latch_keyspace_misses_total",
                                     "Lookups that found no key.", kStatsSection),
    Gauge("pubsub_channels", "latch_pubsub_channels", "Channels with a subscriber.",
          kStatsSection, [](ServerState& s) { return std::uint64_t{s.pubsub.NumChannels()}; }),
    Gauge("pubsub_patterns", "latch_pubsub_patterns", "Patterns subscribed.", kStatsSection,
          [](ServerState& s) { return std::uint64_t{s.pubsub.NumPatterns()}; }),
    {"total_error_replies", "latch_error_replies_total",
     "Error replies sent (errors inside scripts and MULTI counted once).", StatKind::kCounter,
     kStatsSection, [](ServerState& s) { return s.stats.errors.total(); },
     [](ServerState& s) { s.stats.errors.Reset(); }},
    Counter<&Stats::protocol_errors>("protocol_errors", "latch_protocol_errors_total",
                                     "Connections closed for a protocol error.", kStatsSection),
    AclCounter<&AclDenialCounters::denied_auth>("acl_access_denied_auth",
                                            "latch_acl_access_denied_auth_total",
                                            "AUTH and HELLO AUTH attempts refused."),
    AclCounter<&AclDenialCounters::denied_cmd>("acl_access_denied_cmd",
                                           "latch_acl_access_denied_cmd_total",
                                           "Commands refused by a user's command rules."),
    AclCounter<&AclDenialCounters::denied_key>("acl_access_denied_key",
                                           "latch_acl_access_denied_key_total",
                                           "Commands refused by a user's key patterns."),
    AclCounter<&AclDenialCounters::denied_channel>("acl_access_denied_channel",
                                               "latch_acl_access_denied_channel_total",
                                               "Commands refused by a user's channel patterns."),
    Gauge("", "latch_keys", "Keys in the keyspace.", kNone,
          [](ServerState& s) { return std::uint64_t{s.dbs.TotalKeys()}; }),
    Gauge("", "latch_keys_with_ttl", "Keys that have a TTL.", kNone,
          [](ServerState& s) { return std::uint64_t{s.dbs.TotalExpires()}; }),
    LockCounter<&LockStats::grants>("lock_grants", "latch_lock_grants_total",
                                    "LOCK.ACQUIRE grants, direct or handed off."),
    LockCounter<&LockStats::contended>("lock_contended_acquires",
                                       "latch_lock_contended_acquires_total",
                                       "LOCK.ACQUIRE calls that found the key held."),
    Gauge("lock_waiters", "latch_lock_waiters", "Clients waiting in LOCK.ACQUIRE ... WAIT now.",
          InfoSection::kLocks, LockWaiters),
    LockCounter<&LockStats::handoffs>("lock_handoffs", "latch_lock_handoffs_total",
                                      "Locks handed to a waiting client."),
    LockCounter<&LockStats::non_owner_releases>(
        "lock_releases_by_non_owner", "latch_lock_releases_by_non_owner_total",
        "LOCK.RELEASE calls refused because another owner holds the key."),
    LockCounter<&LockStats::expired_while_held>(
        "lock_expired_while_held", "latch_lock_expired_while_held_total",
        "Leases that ran out before their owner released them."),
    Gauge("", "latch_script_busy", "1 while a script runs past lua-time-limit.", kNone,
          [](ServerState& s) { return std::uint64_t{s.script_busy.load() ? 1u : 0u}; }),
};
// clang-format on

// INFO shows these characters of a name as '_' (they would break its "field:value" lines).
void AppendInfoSafe(std::string* out, std::string_view name) {
  for (char c : name) out->push_back(c == '#' || c == ':' || c == '\r' || c == '\n' ? '_' : c);
}

}  // namespace

std::span<const StatDef> StatDefs() { return kStats; }

void AppendInfoStats(std::string* out, ServerState& st, InfoSection section) {
  for (const StatDef& d : kStats) {
    if (d.section != section || d.info.empty()) continue;
    out->append(d.info).append(":").append(std::to_string(d.read(st))).append("\r\n");
  }
}

void AppendInfoErrorStats(std::string* out, ServerState& st) {
  st.stats.errors.ForEach([out](std::string_view code, std::uint64_t count) {
    out->append("errorstat_");
    AppendInfoSafe(out, code);
    out->append(":count=").append(std::to_string(count)).append("\r\n");
  });
}

void ResetStats(ServerState& st) {
  for (const StatDef& d : kStats) {
    if (d.reset != nullptr) d.reset(st);
  }
  if (st.command_stats) st.command_stats->Reset();  // commandstats and latencystats
}

}  // namespace latch
