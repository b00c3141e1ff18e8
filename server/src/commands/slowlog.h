#pragma once
// What a command adds to SLOWLOG and MONITOR (the log itself is metrics/slowlog.h).
#include <cstdint>
#include <span>
#include <string_view>

namespace latch {

struct CommandContext;
struct CommandSpec;

// AUTH's arguments and HELLO's AUTH user and password, shown as "(redacted)" in SLOWLOG
// and MONITOR.
bool RedactedArgument(const CommandSpec& spec, std::span<const std::string_view> args,
                      std::size_t i);

// Called by RecordCommandCall when a command ran `micros` >= the threshold.
void SlowlogPush(CommandContext& ctx, const CommandSpec& spec, std::uint64_t micros);

}  // namespace latch
