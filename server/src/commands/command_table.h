#pragma once
// The dispatcher over the command catalogue (catalogue/command_catalogue.h): the
// constructor registers every built-in command; Dispatch() does lookup (case-insensitive),
// subcommand lookup, arity and authentication checks in one place, with Redis's error texts,
// before any handler runs.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "catalogue/command_catalogue.h"
#include "commands/context.h"
#include "commands/script_host.h"

namespace latch {

// Every built-in command, and the dispatcher that checks and runs them. ServerState holds it
// twice: as `commands` (to dispatch) and as `catalogue` (to read).
class CommandTable : public CommandCatalogue {
 public:
  CommandTable();  // registers every built-in command

  // Checks and runs one command; the reply (or error) is written to ctx.out. Returns the
  // command (or subcommand) that ran, nullptr when it was rejected before running.
  const CommandSpec* Dispatch(CommandContext& ctx) const;

  // Fault injection's way into the dispatcher, owned here so that the dispatcher depends on
  // no implementation of it: testing/fault_hook.h implements one and the server
  // (server.cpp) registers it before the table is shared. While ServerState::faults is
  // active, a client's own command is offered to it first; true means it took the command
  // over (answered, parked or dropped it) and the handler must not run.
  using Interceptor = bool (*)(const CommandSpec& spec, CommandContext& ctx);
  void SetInterceptor(Interceptor interceptor) { interceptor_ = interceptor; }

  // The script engine's way in, registered the same way (state_wiring.cpp): EVAL's, SCRIPT's
  // and SHUTDOWN's handlers reach the engine through ScriptsFor (script_host.h). The
  // function returns the server's engine, creating it on first use; any thread.
  using ScriptHostFor = ScriptHost& (*)(ServerState& server);
  void SetScriptHost(ScriptHostFor host_for) { script_host_for_ = host_for; }
  ScriptHost& scripts(ServerState& server) const { return script_host_for_(server); }

 private:
  // Holds the command's key shards (resolved once into ctx.keys) around the handler, or
  // answers BUSY when a script past busy-reply-threshold holds one.
  void RunHandler(const CommandSpec& spec, CommandContext& ctx) const;
  Interceptor interceptor_ = nullptr;
  ScriptHostFor script_host_for_ = nullptr;
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
