#pragma once
// What the catalogue knows of one command: name, arity (Redis's +N / -N convention), flags,
// legacy key positions, documentation and the handler to run. Plain data: the dispatcher
// (commands/command_table.h) reads it to check and run a command; ACL, COMMAND, INFO and
// /metrics read it to describe one.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace latch {

struct CommandContext;  // commands/context.h: what a handler sees
using CommandHandler = void (*)(CommandContext&);

enum CommandFlag : std::uint32_t {
  kCmdWrite = 1 << 0,
  kCmdReadonly = 1 << 1,
  kCmdFast = 1 << 2,
  kCmdNoAuth = 1 << 3,  // allowed before AUTH
  kCmdAdmin = 1 << 4,
  kCmdLoading = 1 << 5,
  kCmdStale = 1 << 6,
  kCmdNoScript = 1 << 7,  // not callable from scripts
  kCmdDenyOom = 1 << 8,
  kCmdPubSub = 1 << 9,
  kCmdBlocking = 1 << 10,
  kCmdAllowBusy = 1 << 11,          // allowed while a script runs too long
  kCmdTxControl = 1 << 12,          // runs at once inside MULTI instead of being queued
  kCmdOwnKeyLocks = 1 << 13,        // Dispatch does not hold the key shards: the handler locks
  kCmdSubscriberContext = 1 << 14,  // allowed to a RESP2 client in subscriber mode
};

struct CommandSpec {
  std::string name;  // lowercase; "client|id" for a subcommand
  int arity = 0;     // N: exactly N args (name included); -N: at least N
  std::uint32_t flags = 0;
  int first_key = 0, last_key = 0, key_step = 0;  // Redis's legacy key positions
  CommandHandler handler = nullptr;
  std::string_view group;    // COMMAND DOCS: "string", "generic", "connection", "server"...
  std::string_view summary;  // COMMAND DOCS
  std::string_view since;    // COMMAND DOCS
  std::vector<CommandSpec> subcommands;  // container commands (CLIENT, CONFIG, COMMAND)
  // Index into metrics/command_stats.h, set by CommandCatalogue::Add: below kMaxCommandIds.
  std::uint16_t stat_id = 0;

  bool IsContainer() const { return !subcommands.empty(); }
  // The name a user types: "setname" for "client|setname".
  std::string_view short_name() const;
  const CommandSpec* FindSubcommand(std::string_view name) const;
};

// How many commands and subcommands a catalogue holds at most (the size of the per-command
// statistics arrays).
inline constexpr std::size_t kMaxCommandIds = 512;

}  // namespace latch
