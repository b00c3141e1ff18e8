// OBJECT ENCODING/FREQ/IDLETIME/REFCOUNT/HELP and MEMORY USAGE/HELP: what Redis reports of a
// key, as far as it applies to latchd (the answers come from store/object_encoding.h).
#include "commands/arg_parse.h"
#include "commands/command_table.h"
#include "commands/errors.h"
#include "store/object_encoding.h"

namespace latch {
namespace {

// The key's object, or nullptr after answering null (Redis's reply for a missing key).
// OBJECT and MEMORY USAGE do not touch the key (Redis looks it up with LOOKUP_NOTOUCH).
const store::Object* FindOrNull(CommandContext& ctx) {
  const store::KeyRef& k = ctx.key(0);
  const store::Object* o = k.shard->Peek(k.key, k.hash, ctx.now.mono_ms);
  if (o == nullptr) ctx.out.Null();
  return o;
}

void ObjectEncodingCommand(CommandContext& ctx) {
  if (const store::Object* o = FindOrNull(ctx)) ctx.out.Bulk(store::EncodingOf(*o));
}

void ObjectRefcountCommand(CommandContext& ctx) {
  if (const store::Object* o = FindOrNull(ctx)) ctx.out.Integer(store::RefcountOf(*o));
}

// Seconds since a command last read or wrote the key, on the shard's access clock (1 s
// resolution, a 12-day period: store/object.h).
void ObjectIdletimeCommand(CommandContext& ctx) {
  if (const store::Object* o = FindOrNull(ctx)) {
    ctx.out.Integer(o->IdleSeconds(ctx.key(0).shard->access_clock()));
  }
}

// maxmemory-policy is always noeviction, so access frequencies are never tracked: Redis's
// refusal for a policy that is not LFU.
void ObjectFreqCommand(CommandContext& ctx) {
  if (FindOrNull(ctx) == nullptr) return;
  ctx.out.Error(
      "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note "
      "that when switching between policies at runtime LRU and LFU data will take some time to "
      "adjust.");
}

void ObjectHelpCommand(CommandContext& ctx) {
  static constexpr std::string_view kLines[] = {
      "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "ENCODING <key>",
      "    Return the kind of internal representation used in order to store the value",
      "    associated with a <key>.",
      "FREQ <key>",
      "    Return the access frequency index of the <key>. The returned integer is",
      "    proportional to the logarithm of the recent access frequency of the key.",
      "IDLETIME <key>",
      "    Return the idle time of the <key>, that is the approximated number of",
      "    seconds elapsed since the last access to the key.",
      "REFCOUNT <key>",
      "    Return the number of references of the value associated with the specified",
      "    <key>.",
      "HELP",
      "    Prints this help.",
  };
  WriteHelpLines(ctx.out, kLines);
}

// MEMORY USAGE key [SAMPLES count]: strings have nothing to sample, but the option is
// checked as Redis checks it.
void MemoryUsageCommand(CommandContext& ctx) {
  for (std::size_t j = 3; j < ctx.argc(); ++j) {
    if (EqualsNoCase(ctx.arg(j), "samples") && j + 1 < ctx.argc()) {
      std::int64_t samples = 0;
      if (!ParseInt64(ctx.arg(j + 1), &samples)) return ctx.out.Error(errors::kNotInteger);
      if (samples < 0) return ctx.out.Error(errors::kSyntax);
      ++j;
    } else {
      return ctx.out.Error(errors::kSyntax);
    }
  }
  if (const store::Object* o = FindOrNull(ctx)) {
    ctx.out.Integer(static_cast<std::int64_t>(store::MemoryUsageOf(*o)));
  }
}

void MemoryHelpCommand(CommandContext& ctx) {
  static constexpr std::string_view kLines[] = {
      "MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "DOCTOR",
      "    Return memory problems reports.",
      "MALLOC-STATS",
      "    Return internal statistics report from the memory allocator.",
      "PURGE",
      "    Attempt to purge dirty pages for reclamation by the allocator.",
      "STATS",
      "    Return information about the memory usage of the server.",
      "USAGE <key> [SAMPLES <count>]",
      "    Return memory in bytes used by <key> and its value. Nested values are",
      "    sampled up to <count> times (default: 5, 0 means sample all).",
      "HELP",
      "    Prints this help.",
  };
  WriteHelpLines(ctx.out, kLines);
}

CommandSpec KeySub(std::string name, int arity, CommandHandler h, std::string_view summary,
                   std::string_view since) {
  return CommandSpec{.name = std::move(name),
                     .arity = arity,
                     .flags = kCmdReadonly,
                     .first_key = 2,
                     .last_key = 2,
                     .key_step = 1,
                     .handler = h,
                     .group = "generic",
                     .summary = summary,
                     .since = since};
}
CommandSpec HelpSub(std::string name, CommandHandler h) {
  return CommandSpec{.name = std::move(name),
                     .arity = 2,
                     .flags = kCmdLoading | kCmdStale,
                     .handler = h,
                     .group = "generic",
                     .summary = "Returns helpful text about the different subcommands.",
                     .since = "6.2.0"};
}
}  // namespace

void AddMemoryReportCommands(CommandSpec& memory);

void RegisterObjectCommands(CommandTable& t) {
  CommandSpec object{.name = "object",
                     .arity = -2,
                     .flags = 0,
                     .group = "generic",
                     .summary = "A container for object introspection commands.",
                     .since = "2.2.3"};
  object.subcommands.push_back(KeySub("object|encoding", 3, ObjectEncodingCommand,
                                      "Returns the internal encoding of a Redis object.", "2.2.3"));
  object.subcommands.push_back(KeySub("object|freq", 3, ObjectFreqCommand,
                                      "Returns the logarithmic access frequency counter of a "
                                      "Redis object.",
                                      "4.0.0"));
  object.subcommands.push_back(KeySub("object|idletime", 3, ObjectIdletimeCommand,
                                      "Returns the time since the last access to a Redis "
                                      "object.",
                                      "2.2.3"));
  object.subcommands.push_back(KeySub("object|refcount", 3, ObjectRefcountCommand,
                                      "Returns the reference count of a value of a key.", "2.2.3"));
  object.subcommands.push_back(HelpSub("object|help", ObjectHelpCommand));
  t.Add(std::move(object));

  CommandSpec memory{.name = "memory",
                     .arity = -2,
                     .flags = 0,
                     .group = "server",
                     .summary = "A container for memory diagnostics commands.",
                     .since = "4.0.0"};
  memory.subcommands.push_back(KeySub("memory|usage", -3, MemoryUsageCommand,
                                      "Estimates the memory usage of a key.", "4.0.0"));
  memory.subcommands.back().group = "server";
  AddMemoryReportCommands(memory);  // STATS, DOCTOR, MALLOC-STATS (memory_report.cpp)
  memory.subcommands.push_back(HelpSub("memory|help", MemoryHelpCommand));
  t.Add(std::move(memory));
}

}  // namespace latch
