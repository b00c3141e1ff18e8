// MEMORY STATS, MEMORY DOCTOR and MEMORY MALLOC-STATS: Redis 7.0's reply shapes filled from
// what latchd can measure: the malloc heap (mallinfo2) plus the key slabs for what is
// allocated, /proc/self/statm for the resident set, the index buckets for the hash-table
// overhead, the clients' buffers; what latchd does not have (replication, cluster, AOF
// rewrite buffers, functions) is 0.
#include <malloc.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "commands/command_table.h"
#include "server_state.h"
#include "store/keyspace.h"

namespace latch {
namespace {

std::size_t ResidentSetBytes() {
  std::ifstream statm("/proc/self/statm");
  std::size_t pages_total = 0, pages_resident = 0;
  statm >> pages_total >> pages_resident;
  return pages_resident * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

double Ratio(double a, double b) { return b > 0 ? a / b : 0; }

struct MemoryFigures {
  std::size_t peak = 0, total = 0, startup = 0, clients = 0, index = 0, keys = 0, rss = 0;
  std::size_t allocated = 0, active = 0;  // the allocator's view: live blocks, its arenas
  std::size_t overhead() const { return startup + clients + index; }
  std::size_t dataset() const { return total > overhead() ? total - overhead() : 0; }
};

MemoryFigures Measure(ServerState& st) {
  MemoryFigures m;
  m.total = store::UsedMemoryBytes();
  st.RaiseMemoryPeak(m.total);
  m.peak = st.used_memory_peak.load();
  m.startup = st.startup_memory;
  st.clients.ForEach([&](ClientInfo& c) { m.clients += c.buffers.tot_mem.load(); });
  for (int k = 0; k < st.dbs.created(); ++k) {
    store::Keyspace& ks = st.dbs.by_identity(k);
    for (int i = 0; i < ks.shard_count(); ++i) {
      m.index += ks.shard(i).buckets() * 8;  // an index slot is 8 bytes (handle_table.h)
    }
  }
  m.keys = st.dbs.at(0).TotalKeys();  // MEMORY STATS' db.0
  m.rss = ResidentSetBytes();
  const struct mallinfo2 mi = mallinfo2();
  m.allocated = mi.uordblks + mi.hblkhd + store::Slab::Bytes();
  m.active = mi.arena + mi.hblkhd + store::Slab::Bytes();
  return m;
}

void Pair(protocol::ReplyWriter& out, std::string_view name, std::size_t v) {
  out.Bulk(name);
  out.Integer(static_cast<std::int64_t>(v));
}
void Pair(protocol::ReplyWriter& out, std::string_view name, double v) {
  out.Bulk(name);
  out.Double(v);
}

// MEMORY STATS: Redis 7.0.15's fields in its order (db.N for each database with keys).
void MemoryStatsCommand(CommandContext& ctx) {
  const MemoryFigures m = Measure(ctx.server);
  const bool has_db = m.keys > 0;
  ctx.out.MapHeader(27 + (has_db ? 1 : 0));
  Pair(ctx.out, "peak.allocated", m.peak);
  Pair(ctx.out, "total.allocated", m.total);
  Pair(ctx.out, "startup.allocated", m.startup);
  Pair(ctx.out, "replication.backlog", std::size_t{0});
  Pair(ctx.out, "clients.slaves", std::size_t{0});
  Pair(ctx.out, "clients.normal", m.clients);
  Pair(ctx.out, "cluster.links", std::size_t{0});
  Pair(ctx.out, "aof.buffer", std::size_t{0});
  Pair(ctx.out, "lua.caches", std::size_t{0});
  Pair(ctx.out, "functions.caches", std::size_t{0});
  if (has_db) {
    ctx.out.Bulk("db.0");
    ctx.out.MapHeader(3);
    Pair(ctx.out, "overhead.hashtable.main", m.index);
    // Deadlines live in the objects and their timer links (no second table).
    Pair(ctx.out, "overhead.hashtable.expires", std::size_t{0});
    Pair(ctx.out, "overhead.hashtable.slot-to-keys", std::size_t{0});
  }
  Pair(ctx.out, "overhead.total", m.overhead());
  Pair(ctx.out, "keys.count", m.keys);
  Pair(ctx.out, "keys.bytes-per-key",
       m.keys > 0 && m.total > m.startup ? (m.total - m.startup) / m.keys : 0);
  Pair(ctx.out, "dataset.bytes", m.dataset());
  Pair(ctx.out, "dataset.percentage",
       Ratio(static_cast<double>(m.dataset()) * 100,
             static_cast<double>(m.total > m.startup ? m.total - m.startup : 0)));
  Pair(ctx.out, "peak.percentage", Ratio(static_cast<double>(m.total) * 100, m.peak));
  Pair(ctx.out, "allocator.allocated", m.allocated);
  Pair(ctx.out, "allocator.active", m.active);
  Pair(ctx.out, "allocator.resident", m.rss);
  Pair(ctx.out, "allocator-fragmentation.ratio", Ratio(m.active, m.allocated));
  Pair(ctx.out, "allocator-fragmentation.bytes",
       m.active > m.allocated ? m.active - m.allocated : 0);
  Pair(ctx.out, "allocator-rss.ratio", Ratio(m.rss, m.active));
  Pair(ctx.out, "allocator-rss.bytes", m.rss > m.active ? m.rss - m.active : 0);
  // allocator.resident is the process's resident set: nothing lies between the two.
  Pair(ctx.out, "rss-overhead.ratio", 1.0);
  Pair(ctx.out, "rss-overhead.bytes", std::size_t{0});
  Pair(ctx.out, "fragmentation", Ratio(m.rss, m.total));
  Pair(ctx.out, "fragmentation.bytes", m.rss > m.total ? m.rss - m.total : 0);
}

// MEMORY DOCTOR: Redis's fixed answers for a small instance and a healthy one; otherwise
// latchd's own list of what looks wrong.
void MemoryDoctorCommand(CommandContext& ctx) {
  const MemoryFigures m = Measure(ctx.server);
  if (m.total < 5 * 1024 * 1024) {
    return ctx.out.Verbatim(
        "Hi Sam, this instance is empty or is using very little memory, my issues detector "
        "can't be used in these conditions. Please, leave for your mission on Earth and fill it "
        "with some data. The new Sam and I will be back to our programming as soon as I "
        "finished rebooting.");
  }
  std::string issues;
  if (m.peak > m.total * 3 / 2) {
    issues += "- The peak (" + std::to_string(m.peak) + " bytes) is more than 150% of the " +
              "bytes in use now (" + std::to_string(m.total) +
              "): memory freed by expired or deleted keys may not have gone back to the system "
              "yet (MEMORY PURGE asks malloc to return it).\n";
  }
  if (Ratio(m.rss, m.total) > 1.4 && m.rss - m.total > 10 * 1024 * 1024) {
    issues += "- The resident set is " + std::to_string(Ratio(m.rss, m.total)) +
              " times the bytes in use: the heap is fragmented, or pages freed a moment ago "
              "are still resident (the slabs give idle pages back within seconds).\n";
  }
  if (m.clients > 32 * 1024 * 1024) {
    issues += "- Client buffers hold " + std::to_string(m.clients) +
              " bytes: CLIENT LIST's omem and qbuf show which clients; "
              "client-output-buffer-limit bounds them.\n";
  }
  if (issues.empty()) {
    return ctx.out.Verbatim(
        "Hi Sam, I can't find any memory issue in your instance. I can only account for what "
        "occurs on this base.");
  }
  ctx.out.Verbatim("latchd found these memory issues:\n\n" + issues);
}

// MEMORY MALLOC-STATS: glibc's own report (malloc_info's XML), where Redis prints
// jemalloc's.
void MemoryMallocStatsCommand(CommandContext& ctx) {
  char* buf = nullptr;
  std::size_t len = 0;
  FILE* f = open_memstream(&buf, &len);
  if (f == nullptr) return ctx.out.Verbatim("Stats not supported for the current allocator");
  malloc_info(0, f);
  std::fclose(f);
  std::string text(buf, len);
  std::free(buf);
  ctx.out.Verbatim(text);
}

// MEMORY PURGE: gives malloc's free memory back to the system, as Redis asks jemalloc to.
void MemoryPurgeCommand(CommandContext& ctx) {
  malloc_trim(0);
  ctx.out.Simple("OK");
}

CommandSpec ReportSub(std::string name, CommandHandler h, std::string_view summary) {
  return CommandSpec{.name = std::move(name),
                     .arity = 2,
                     .flags = 0,
                     .handler = h,
                     .group = "server",
                     .summary = summary,
                     .since = "4.0.0"};
}
}  // namespace

void AddMemoryReportCommands(CommandSpec& memory) {
  memory.subcommands.push_back(
      ReportSub("memory|stats", MemoryStatsCommand, "Returns details about memory usage."));
  memory.subcommands.push_back(
      ReportSub("memory|doctor", MemoryDoctorCommand, "Outputs a memory problems report."));
  memory.subcommands.push_back(ReportSub("memory|malloc-stats", MemoryMallocStatsCommand,
                                         "Returns the allocator statistics."));
  memory.subcommands.push_back(
      ReportSub("memory|purge", MemoryPurgeCommand, "Asks the allocator to release memory."));
}

}  // namespace latch
