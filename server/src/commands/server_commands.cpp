// INFO, CONFIG GET/SET/RESETSTAT/HELP, TIME, DEBUG, SHUTDOWN. INFO's numbers and RESETSTAT
// come from the stats registry (report/stats_registry.h).
#include <spdlog/logger.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

#include "acl/acl_file.h"
#include "commands/arg_parse.h"
#include "commands/client_pause.h"
#include "commands/clock_advance.h"
#include "commands/command_table.h"
#include "commands/db_commands.h"
#include "commands/errors.h"
#include "commands/key_lock.h"
#include "commands/peer_address.h"
#include "commands/replication_info.h"
#include "commands/script_host.h"
#include "config/config_get_set.h"
#include "config/log_setup.h"
#include "journal/persistence.h"
#include "latch/protocol/error_arg.h"
#include "latch/protocol/info_line.h"
#include "metrics/command_stats.h"
#include "metrics/keyspace_info.h"
#include "report/stats_registry.h"
#include "store/object_encoding.h"

#ifndef LATCH_VERSION
#define LATCH_VERSION "0.0.0"
#endif

namespace latch {
namespace {

using protocol::AppendInfoLine;

std::string InfoText(CommandContext& ctx, std::span<const std::string_view> sections) {
  auto wants = [&](std::string_view name, bool in_default) {
    if (sections.empty()) return in_default;
    for (auto s : sections) {
      if (EqualsNoCase(s, name) || EqualsNoCase(s, "all") || EqualsNoCase(s, "everything") ||
          (in_default && EqualsNoCase(s, "default"))) {
        return true;
      }
    }
    return false;
  };
  ServerState& st = ctx.server;
  std::string s;
  std::int64_t uptime_ms = ctx.now.mono_ms - st.start_mono_ms;
  if (wants("server", true)) {
    s.append("# Server\r\n");
    AppendInfoLine(&s, "redis_version", std::string("7.0.15"));
    AppendInfoLine(&s, "latch_version", std::string(LATCH_VERSION));
    AppendInfoLine(&s, "redis_mode", std::string("standalone"));
    AppendInfoLine(&s, "os", std::string("Linux"));
    AppendInfoLine(&s, "arch_bits", std::string("64"));
    AppendInfoLine(&s, "multiplexing_api", std::string("epoll"));
    AppendInfoLine(&s, "process_id", static_cast<std::uint64_t>(getpid()));
    AppendInfoLine(&s, "run_id", st.run_id);
    AppendInfoLine(&s, "tcp_port", static_cast<std::uint64_t>(st.tcp_port));
    AppendInfoLine(&s, "server_time_usec", static_cast<std::uint64_t>(ctx.now.wall_us));
    AppendInfoLine(&s, "uptime_in_seconds", static_cast<std::uint64_t>(uptime_ms / 1000));
    AppendInfoLine(&s, "uptime_in_days", static_cast<std::uint64_t>(uptime_ms / 86400000));
    AppendInfoLine(&s, "io_threads_active", static_cast<std::uint64_t>(st.io_threads > 1));
    AppendInfoLine(&s, "io_threads", static_cast<std::uint64_t>(st.io_threads));
    AppendInfoLine(&s, "shards", static_cast<std::uint64_t>(st.dbs.shards_per_db()));
    s.append("\r\n");
  }
  if (wants("clients", true)) {
    s.append("# Clients\r\n");
    AppendInfoStats(&s, st, InfoSection::kClients);
    s.append("\r\n");
  }
  if (wants("memory", true)) {
    s.append("# Memory\r\n");
    AppendInfoStats(&s, st, InfoSection::kMemory);
    AppendInfoLine(&s, "maxmemory_policy", std::string("noeviction"));
    AppendInfoLine(&s, "mem_allocator", std::string("libc"));
    s.append("\r\n");
  }
  if (wants("persistence", true)) {
    s.append("# Persistence\r\n");
    st.persistence->AppendInfo(&s);  // journal/persistence.cpp
    s.append("\r\n");
  }
  if (wants("stats", true)) {
    s.append("# Stats\r\n");
    AppendInfoStats(&s, st, InfoSection::kStats);
    s.append("\r\n");
  }
  if (wants("replication", true)) {
    s.append("# Replication\r\n");
    AppendReplicationInfo(st, &s);  // commands/replication_info.cpp
    s.append("\r\n");
  }
  if (wants("commandstats", false)) {
    s.append("# Commandstats\r\n");
    AppendInfoCommandStats(&s, st.command_stats.get(), st.catalogue);  // metrics/command_stats.cpp
    s.append("\r\n");
  }
  if (wants("errorstats", true)) {
    s.append("# Errorstats\r\n");
    AppendInfoErrorStats(&s, st);
    s.append("\r\n");
  }
  if (wants("latencystats", false)) {
    s.append("# Latencystats\r\n");
    AppendInfoLatencyStats(&s, st.command_stats.get(), st.catalogue);
    s.append("\r\n");
  }
  if (wants("keyspace", true)) {
    s.append("# Keyspace\r\n");
    AppendKeyspaceInfo(st.dbs, &s);
    s.append("\r\n");
  }
  if (wants("locks", true)) {
    s.append("# Locks\r\n");
    AppendInfoStats(&s, st, InfoSection::kLocks);
    s.append("\r\n");
  }
  if (wants("faults", st.faults.active())) {  // fault_injector.h
    s.append("# Faults\r\n");
    st.faults.AppendInfo(&s);
    s.append("\r\n");
  }
  // Redis ends the text without the blank line of the last section.
  if (s.size() >= 2) s.resize(s.size() - 2);
  return s;
}

void InfoCommand(CommandContext& ctx) { ctx.out.Verbatim(InfoText(ctx, ctx.args.subspan(1))); }

void TimeCommand(CommandContext& ctx) {
  ctx.out.ArrayHeader(2);
  ctx.out.Bulk(std::to_string(ctx.now.wall_us / 1'000'000));
  ctx.out.Bulk(std::to_string(ctx.now.wall_us % 1'000'000));
}

// LASTSAVE: Redis counts the data as saved when the server starts and moves the time with
// each RDB save; latchd writes no RDB (its journal is the AOF), so it is the start time.
void LastSaveCommand(CommandContext& ctx) {
  const std::int64_t up_ms = ctx.now.mono_ms - ctx.server.start_mono_ms;
  ctx.out.Integer((ctx.now.wall_us / 1000 - up_ms) / 1000);
}

void ConfigGetCommand(CommandContext& ctx) {
  std::vector<std::pair<std::string, std::string>> pairs;
  {
    std::lock_guard lock(ctx.server.options_mu);
    pairs = config::ConfigGet(ctx.server.options, ctx.args.subspan(2));
  }
  ctx.out.MapHeader(pairs.size());
  for (const auto& [k, v] : pairs) {
    ctx.out.Bulk(k);
    ctx.out.Bulk(v);
  }
}

void ConfigSetCommand(CommandContext& ctx) {
  auto args = ctx.args.subspan(2);
  if (args.size() % 2 != 0) {
    return ctx.out.Error("ERR wrong number of arguments for 'config|set' command");
  }
  std::string loglevel;
  {
    std::lock_guard lock(ctx.server.options_mu);
    Options updated = ctx.server.options;
    bool allow_protected = updated.enable_protected_configs;
    if (!allow_protected && updated.enable_protected_configs_local) {
      std::lock_guard clients(ctx.server.clients.mu);
      allow_protected = ctx.session.info->unix_socket || IsLoopbackPeer(ctx.session.info->addr);
    }
    if (auto err = config::ConfigSet(updated, args, allow_protected)) return ctx.out.Error(*err);
    if (ctx.server.reload_tls) {
      if (auto err = ctx.server.reload_tls(updated, args)) return ctx.out.Error(*err);
    }
    ctx.server.options = std::move(updated);
    ctx.server.SyncHotOptions();
    acl::ApplyRequirepass(ctx.server);
    loglevel = ctx.server.options.loglevel;
  }
  ctx.server.log->set_level(config::SpdlogLevel(loglevel));
  if (auto err = ctx.server.persistence->ApplyConfig()) return ctx.out.Error(*err);
  ctx.out.Ok();
}

void ConfigResetStatCommand(CommandContext& ctx) {
  ResetStats(ctx.server);
  ctx.out.Ok();
}

void ConfigHelpCommand(CommandContext& ctx) {
  static constexpr std::string_view kLines[] = {
      "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "GET <pattern>",
      "    Return parameters matching the glob-like <pattern> and their values.",
      "SET <directive> <value>",
      "    Set the configuration <directive> to <value>.",
      "RESETSTAT",
      "    Reset statistics reported by the INFO command.",
      "REWRITE",
      "    Rewrite the configuration file.",
      "HELP",
      "    Prints this help.",
  };
  WriteHelpLines(ctx.out, kLines);
}

// Redis's DEBUG HELP layout, listing the subcommands latchd has.
void DebugHelp(CommandContext& ctx) {
  static constexpr std::string_view kLines[] = {
      "DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "ADVANCE-CLOCK <milliseconds>",
      "    Move the server's clock forward (only when it runs on an injected manual clock).",
      "OBJECT <key>",
      "    Show low level info about the `key` and associated value.",
      "SET-ACTIVE-EXPIRE <0|1>",
      "    Setting it to 0 disables expiring keys in background when they are not accessed",
      "    (otherwise the Redis behavior). Setting it to 1 reenables back the default.",
      "SLEEP <seconds>",
      "    Stop the server for <seconds> (0 to 60).",
      "HELP",
      "    Prints this help.",
  };
  WriteHelpLines(ctx.out, kLines);
}

// DEBUG OBJECT key in Redis's line format. "at:" is the key's block, which an in-place write
// (INCR within the block's size class) keeps; refcount and encoding are OBJECT's answers;
// serializedlength is the string's length (0 for a hash or sorted set: latchd writes no RDB),
// lru the access clock's stamp and lru_seconds_idle OBJECT IDLETIME's answer (the lookup
// does not touch the key, as in Redis).
void DebugObject(CommandContext& ctx) {
  const KeyRef k = Resolve(ctx.db(), ctx.arg(2));
  ShardSet held;
  if (!held.Lock(ctx.db(), k, GiveUpFlag(ctx))) return ctx.out.Error(errors::kBusyScript);
  const store::Object* o = k.shard->Peek(k.key, k.hash, ctx.now.mono_ms);
  if (o == nullptr) return ctx.out.Error(errors::kNoSuchKey);
  char line[256];
  std::snprintf(line, sizeof(line),
                "Value at:%p refcount:%lld encoding:%.*s serializedlength:%zu lru:%u "
                "lru_seconds_idle:%u",
                static_cast<const void*>(o), static_cast<long long>(store::RefcountOf(*o)),
                static_cast<int>(store::EncodingOf(*o).size()), store::EncodingOf(*o).data(),
                o->is_container() ? std::size_t{0} : o->value().size(), o->access_clock(),
                o->IdleSeconds(k.shard->access_clock()));
  ctx.out.Simple(line);
}

// DEBUG exists only with enable-debug-command yes (or local): it can freeze the server.
void DebugCommand(CommandContext& ctx) {
  bool allowed;
  {
    std::lock_guard lock(ctx.server.options_mu);
    allowed = ctx.server.options.enable_debug_command;
    if (!allowed && ctx.server.options.enable_debug_command_local) {
      std::lock_guard clock(ctx.server.clients.mu);
      allowed = ctx.session.info->unix_socket || IsLoopbackPeer(ctx.session.info->addr);
    }
  }
  if (!allowed) {
    return ctx.out.Error(
        "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", "
        "you can run it from a local connection, otherwise you need to set this option in the "
        "configuration file, and then restart the server.");
  }
  std::string_view sub = ctx.arg(1);
  if (EqualsNoCase(sub, "help") && ctx.argc() == 2) return DebugHelp(ctx);
  if (EqualsNoCase(sub, "advance-clock") && ctx.argc() == 3) {
    // Moves an injected ManualClock (as TEST.CLOCK ADVANCE); refused on the system clock.
    std::int64_t ms;
    if (ManualClockOf(ctx.server) == nullptr) {
      return ctx.out.Error("ERR the server runs on the system clock");
    }
    if (!ParseInt64(ctx.arg(2), &ms) || ms < 0) return ctx.out.Error(errors::kNotInteger);
    if (auto error = AdvanceClock(ctx.server, ms)) return ctx.out.Error(*error);
    return ctx.out.Ok();
  }
  if (EqualsNoCase(sub, "object") && ctx.argc() == 3) return DebugObject(ctx);
  if (EqualsNoCase(sub, "set-active-expire") && ctx.argc() == 3) {
    // As Redis's atoi: anything but a number starting with a non-zero digit turns it off.
    ctx.server.client_pause->set_active_expire(std::atoi(std::string(ctx.arg(2)).c_str()) != 0);
    return ctx.out.Ok();
  }
  if (EqualsNoCase(sub, "sleep") && ctx.argc() == 3) {
    // Seconds with a fraction, as Redis takes them (DEBUG SLEEP 0.05).
    const std::string text(ctx.arg(2));
    char* end = nullptr;
    const double sec = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size() || !(sec >= 0 && sec <= 60)) {
      return ctx.out.Error(errors::kNotInteger);
    }
    usleep(static_cast<useconds_t>(sec * 1'000'000));
    return ctx.out.Ok();
  }
  ctx.out.Error("ERR unknown subcommand '" + std::string(protocol::ErrorArg(sub)) +
                "'. Try DEBUG HELP.");
}

// SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT] with Redis 7.0's argument rules. latchd
// keeps nothing on disk, so there is nothing to save: SHUTDOWN and SHUTDOWN NOSAVE stop the
// server at once (the client sees its connection closed, no reply, as with Redis), SAVE is
// refused rather than pretend to persist, and ABORT finds no shutdown in progress.
void ShutdownCommand(CommandContext& ctx) {
  bool nosave = false, save = false, abort = false, other = false;
  for (std::size_t i = 1; i < ctx.argc(); ++i) {
    switch (FoldWord(ctx.arg(i))) {
      case Word("nosave"):
        nosave = true;
        break;
      case Word("save"):
        save = true;
        break;
      case Word("now"):
      case Word("force"):
        other = true;
        break;
      case Word("abort"):
        abort = true;
        break;
      default:
        return ctx.out.Error(errors::kSyntax);
    }
  }
  if ((abort && (nosave || save || other)) || (nosave && save)) {
    return ctx.out.Error(errors::kSyntax);
  }
  if (ctx.session.in_multi) {  // no_multi: rejected, and the transaction is doomed
    ctx.session.multi_error = true;
    return ctx.out.Error("ERR Command not allowed inside a transaction");
  }
  if (abort) return ctx.out.Error("ERR No shutdown in progress.");
  if (ctx.server.script_busy.load(std::memory_order_relaxed)) {
    // As in Redis, a script past lua-time-limit lets only SHUTDOWN NOSAVE through; that
    // one kills the script, written or not.
    if (!nosave) return ctx.out.Error(errors::kBusyScript);
    ScriptsFor(ctx).KillForShutdown();
  }
  if (save) {
    ctx.server.log->warn(
        "SHUTDOWN SAVE refused: latchd keeps no data on disk (use SHUTDOWN NOSAVE).");
    return ctx.out.Error("ERR Errors trying to SHUTDOWN. Check logs.");
  }
  if (!ctx.server.request_shutdown)
    return ctx.out.Error("ERR Errors trying to SHUTDOWN. Check logs.");
  ctx.session.close_after_reply = true;  // closed without a reply, as Redis does
  ctx.server.request_shutdown();
}

CommandSpec ConfigSub(std::string name, int arity, CommandHandler h, std::string_view summary,
                      std::string_view since) {
  return CommandSpec{.name = std::move(name),
                     .arity = arity,
                     .flags = kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale,
                     .handler = h,
                     .group = "server",
                     .summary = summary,
                     .since = since};
}

}  // namespace

void RegisterServerCommands(CommandTable& t) {
  t.Add({.name = "info",
         .arity = -1,
         .flags = kCmdLoading | kCmdStale,
         .handler = InfoCommand,
         .group = "server",
         .summary = "Returns information and statistics about the server.",
         .since = "1.0.0"});
  t.Add({.name = "time",
         .arity = 1,
         .flags = kCmdFast | kCmdLoading | kCmdStale,
         .handler = TimeCommand,
         .group = "server",
         .summary = "Returns the server time.",
         .since = "2.6.0"});
  t.Add({.name = "role",
         .arity = 1,
         .flags = kCmdNoScript | kCmdFast | kCmdLoading | kCmdStale,
         .handler = RoleCommand,
         .group = "server",
         .summary = "Returns the replication role.",
         .since = "2.8.12"});
  t.Add({.name = "lastsave",
         .arity = 1,
         .flags = kCmdFast | kCmdLoading | kCmdStale,
         .handler = LastSaveCommand,
         .group = "server",
         .summary = "Returns the Unix timestamp of the last successful save to disk.",
         .since = "1.0.0"});
  t.Add({.name = "debug",
         .arity = -2,
         .flags = kCmdAdmin | kCmdNoScript | kCmdLoading,
         .handler = DebugCommand,
         .group = "server",
         .summary = "A container for debugging commands.",
         .since = "1.0.0"});
  t.Add(
      {.name = "shutdown",
       .arity = -1,
       .flags = kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale | kCmdAllowBusy | kCmdTxControl,
       .handler = ShutdownCommand,
       .group = "server",
       .summary = "Synchronously saves the database(s) to disk and shuts down the Redis "
                  "server.",
       .since = "1.0.0"});
  CommandSpec config{.name = "config",
                     .arity = -2,
                     .group = "server",
                     .summary = "A container for server configuration commands.",
                     .since = "2.0.0"};
  config.subcommands.push_back(ConfigSub("config|get", -3, ConfigGetCommand,
                                         "Returns the effective values of configuration "
                                         "parameters.",
                                         "2.0.0"));
  config.subcommands.push_back(ConfigSub("config|set", -4, ConfigSetCommand,
                                         "Sets configuration parameters in-flight.", "2.0.0"));
  config.subcommands.push_back(ConfigSub("config|resetstat", 2, ConfigResetStatCommand,
                                         "Resets the server's statistics.", "2.0.0"));
  config.subcommands.push_back(
      CommandSpec{.name = "config|help",
                  .arity = 2,
                  .flags = kCmdLoading | kCmdStale,
                  .handler = ConfigHelpCommand,
                  .group = "server",
                  .summary = "Returns helpful text about the different subcommands.",
                  .since = "5.0.0"});
  AddConfigRewriteSubcommand(config);  // config_rewrite_command.cpp
  t.Add(std::move(config));
}

}  // namespace latch
