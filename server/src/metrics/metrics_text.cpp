#include "metrics/metrics_text.h"


#include <algorithm>
#include <cstdint>
#include <string_view>

#include "server_state.h"

namespace latch {
namespace {

void Metric(std::string* out, std::string_view name, std::string_view type, std::string_view help,
            double value) {
  out->append("# HELP ").append(name).append(" ").append(help).append("\n");
  out->append("# TYPE ").append(name).append(" ").append(type).append("\n");
  char buf[64];
  // Integral values (all of ours but uptime) print without a fraction.
  const auto whole = static_cast<std::int64_t>(value);
  const int n = static_cast<double>(whole) == value
                    ? std::snprintf(buf, sizeof(buf), "%lld", static_cast<long long>(whole))
                    : std::snprintf(buf, sizeof(buf), "%.3f", value);
  out->append(name).append(" ").append(buf, static_cast<std::size_t>(n)).append("\n");
}

double U(std::uint64_t v) { return static_cast<double>(v); }

}  // namespace

std::string MetricsText(ServerState& st) {
  std::string s;
  const Stats& x = st.stats;
  const std::int64_t uptime_ms = st.clock->MonoMs() - st.start_mono_ms;
  Metric(&s, "latch_uptime_seconds", "gauge", "Seconds since the server started.",
         static_cast<double>(uptime_ms) / 1000.0);
  Metric(&s, "latch_connected_clients", "gauge", "Client connections open now.",
         U(st.clients.count()));
  Metric(&s, "latch_connections_received_total", "counter", "Connections accepted.",
         U(x.total_connections.load()));
  Metric(&s, "latch_connections_rejected_total", "counter",
         "Connections refused because of maxclients.", U(x.rejected_connections.load()));
  Metric(&s, "latch_commands_processed_total", "counter", "Commands run.",
         U(x.total_commands.load()));
  Metric(&s, "latch_protocol_errors_total", "counter",
         "Connections closed for a protocol error.", U(x.protocol_errors.load()));
  Metric(&s, "latch_net_input_bytes_total", "counter", "Bytes read from clients.",
         U(x.net_input_bytes.load()));
  Metric(&s, "latch_net_output_bytes_total", "counter", "Bytes written to clients.",
         U(x.net_output_bytes.load()));
  Metric(&s, "latch_keyspace_hits_total", "counter", "Lookups that found their key.",
         U(x.keyspace_hits.load()));
  Metric(&s, "latch_keyspace_misses_total", "counter", "Lookups that found no key.",
         U(x.keyspace_misses.load()));
  Metric(&s, "latch_keys", "gauge", "Keys in the keyspace.", U(st.keyspace.TotalKeys()));
  Metric(&s, "latch_keys_with_ttl", "gauge", "Keys that have a TTL.",
         U(st.keyspace.TotalExpires()));
  Metric(&s, "latch_expired_keys_total", "counter", "Keys removed because their TTL ran out.",
         U(st.keyspace.TotalExpired()));
  Metric(&s, "latch_used_memory_bytes", "gauge", "Bytes in use: malloc heap and key slabs.",
         U(store::UsedMemoryBytes()));
  store::LockStats& l = st.locks.stats();
  Metric(&s, "latch_lock_grants_total", "counter", "LOCK.ACQUIRE grants, direct or handed off.",
         U(l.grants.load()));
  Metric(&s, "latch_lock_contended_acquires_total", "counter",
         "LOCK.ACQUIRE calls that found the key held.", U(l.contended.load()));
  Metric(&s, "latch_lock_waiters", "gauge", "Clients waiting in LOCK.ACQUIRE ... WAIT now.",
         static_cast<double>(std::max<std::int64_t>(0, l.waiters.load())));
  Metric(&s, "latch_lock_handoffs_total", "counter", "Locks handed to a waiting client.",
         U(l.handoffs.load()));
  Metric(&s, "latch_lock_releases_by_non_owner_total", "counter",
         "LOCK.RELEASE calls refused because another owner holds the key.",
         U(l.non_owner_releases.load()));
  Metric(&s, "latch_lock_expired_while_held_total", "counter",
         "Leases that ran out before their owner released them.",
         U(l.expired_while_held.load()));
  Metric(&s, "latch_script_busy", "gauge", "1 while a script runs past lua-time-limit.",
         st.script_busy.load() ? 1 : 0);
  return s;
}

}  // namespace latch
