#pragma once
// The declarative command table: name, arity (Redis's +N / -N convention), flags, key
// positions and handler. Dispatch() does lookup (case-insensitive), subcommand lookup,
// arity and authentication checks in one place, with Redis's error texts, before any
// handler runs.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <tsl/robin_map.h>

#include "commands/context.h"

namespace latch {

using CommandHandler = void (*)(CommandContext&);

enum CommandFlag : std::uint32_t {
  kCmdWrite = 1 << 0,
  kCmdReadonly = 1 << 1,
  kCmdFast = 1 << 2,
  kCmdNoAuth = 1 << 3,      // allowed before AUTH
  kCmdAdmin = 1 << 4,
  kCmdLoading = 1 << 5,
  kCmdStale = 1 << 6,
  kCmdNoScript = 1 << 7,    // not callable from scripts
  kCmdDenyOom = 1 << 8,
  kCmdPubSub = 1 << 9,
  kCmdBlocking = 1 << 10,
  kCmdAllowBusy = 1 << 11,  // allowed while a script runs too long
  kCmdTxControl = 1 << 12,  // runs at once inside MULTI instead of being queued
  kCmdOwnKeyLocks = 1 << 13,  // Dispatch does not hold the key shards: the handler locks
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
  std::uint16_t stat_id = 0;  // index into metrics/command_stats.h, set by CommandTable::Add

  bool IsContainer() const { return !subcommands.empty(); }
  // The name a user types: "setname" for "client|setname".
  std::string_view short_name() const;
  const CommandSpec* FindSubcommand(std::string_view name) const;
};

class CommandTable {
 public:
  CommandTable();  // registers every built-in command

  void Add(CommandSpec spec);
  const CommandSpec* Find(std::string_view name) const;  // case-insensitive
  // The spec a command line runs: a container's subcommand when one is named; nullptr when
  // unknown. No arity or flag checks (Dispatch does those).
  const CommandSpec* FindCommand(std::span<const std::string> args) const;
  template <class Fn>
  void ForEach(Fn&& fn) const {
    for (const auto& spec : specs_) fn(spec);
  }
  std::size_t size() const { return specs_.size(); }

  // Checks and runs one command; the reply (or error) is written to ctx.out. Returns the
  // command (or subcommand) that ran, nullptr when it was rejected before running.
  const CommandSpec* Dispatch(CommandContext& ctx) const;

 private:
  // FNV-1a: command names are short, and Find() folds case and hashes in the same loop.
  struct NameHash {
    using is_transparent = void;
    static constexpr std::size_t kSeed = 14695981039346656037ULL;
    static constexpr std::size_t Step(std::size_t h, char c) {
      return (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
    }
    std::size_t operator()(std::string_view s) const {
      std::size_t h = kSeed;
      for (char c : s) h = Step(h, c);
      return h;
    }
  };
  struct NameEq {
    using is_transparent = void;
    bool operator()(std::string_view a, std::string_view b) const { return a == b; }
  };
  // Holds the command's key shards (resolved once into ctx.keys) around the handler, or
  // answers BUSY when a script past busy-reply-threshold holds one.
  void RunHandler(const CommandSpec& spec, CommandContext& ctx) const;
  std::vector<CommandSpec> specs_;  // stable after construction
  std::uint16_t next_stat_id_ = 0;
  tsl::robin_map<std::string, std::size_t, NameHash, NameEq> index_;
};

// HELP subcommands: one simple string per line, as Redis replies them.
inline void WriteHelpLines(protocol::ReplyWriter& out, std::span<const std::string_view> lines) {
  out.ArrayHeader(lines.size());
  for (auto l : lines) out.Simple(l);
}

// Families register themselves here (one function per source file).
void RegisterConnectionCommands(CommandTable& t);
void RegisterStringCommands(CommandTable& t);
void RegisterKeyCommands(CommandTable& t);
void RegisterExpireCommands(CommandTable& t);
void RegisterServerCommands(CommandTable& t);
void RegisterIntrospectionCommands(CommandTable& t);
void RegisterLockCommands(CommandTable& t);     // lock_commands.cpp
void RegisterCompareCommands(CommandTable& t);  // compare_commands.cpp: DELEX, DIGEST, DELIFEQ
void RegisterTransactionCommands(CommandTable& t);
void RegisterScriptingCommands(CommandTable& t);  // script_commands.cpp: EVAL*, SCRIPT
void RegisterFunctionCommands(CommandTable& t);   // function_commands.cpp: FUNCTION, FCALL*
void RegisterTestCommands(CommandTable& t);  // test_commands.cpp: TEST.* (test mode only)
void RegisterPubsubCommands(CommandTable& t);     // pubsub_commands.cpp
void RegisterSlowlogCommands(CommandTable& t);  // slowlog.cpp
void RegisterObjectCommands(CommandTable& t);   // object_command.cpp: OBJECT, MEMORY
void RegisterLatencyCommands(CommandTable& t);  // latency_command.cpp
void RegisterMonitorCommand(CommandTable& t);   // monitor.cpp
// CLIENT KILL/PAUSE/UNPAUSE/NO-EVICT (client_admin.cpp), added to the CLIENT container.
void AddClientAdminSubcommands(CommandSpec& client);
void AddConfigRewriteSubcommand(CommandSpec& config);  // config_rewrite_command.cpp
void RegisterAclCommands(CommandTable& t);        // acl_commands.cpp: ACL *
void RegisterHashCommands(CommandTable& t);          // hash_commands.cpp
void RegisterZSetCommands(CommandTable& t);          // zset_commands.cpp
void RegisterZSetRangeCommands(CommandTable& t);     // zset_range_commands.cpp
void RegisterStringEditCommands(CommandTable& t);    // string_edit_commands.cpp
void RegisterKeyMoveCommands(CommandTable& t);       // key_move_commands.cpp
void RegisterDbCommands(CommandTable& t);         // db_commands.cpp: WAIT
// Later families add their Register function here and call it in CommandTable's constructor.

}  // namespace latch
