#pragma once
// Fault injection's hook into the dispatcher (fault_injector.h): the server registers
// InterceptCommand as the table's CommandTable::Interceptor (commands/command_table.h), which
// the dispatcher calls while ServerState::faults is active.
//
// Only a client's own command on a connection is intercepted (not EXEC's queue, scripts'
// redis.call, REST or in-process calls) and never a TEST.* command.
namespace latch {
struct CommandSpec;
struct CommandContext;
}  // namespace latch

namespace latch::testing {

// Counts the command (test mode) and applies the fault armed for it, if any. True when the
// fault took the command over (the dispatcher must not run it); false: run it normally.
bool InterceptCommand(const CommandSpec& spec, CommandContext& ctx);

}  // namespace latch::testing
