#pragma once
// The keys a command line names, in Redis's order: from the table's legacy key positions, or
// from a count in the arguments (EVAL/FCALL numkeys, ZUNION numkeys, ZUNIONSTORE destination
// then numkeys sources). One place for ACL's key checks and COMMAND GETKEYS, so what a user
// is told a command touches is what ACL checks.
#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

namespace latch {

struct CommandSpec;

enum class KeyAccess : unsigned char { kRead, kWrite, kReadWrite };

struct KeyArg {
  std::size_t pos;  // index into the command line's arguments
  KeyAccess access;
};

// True when `spec` names keys at all (fixed positions or a count).
bool CommandHasKeys(const CommandSpec& spec);

// True when where its keys are depends on the arguments (a count): COMMAND INFO's
// "movablekeys" flag.
bool CommandHasMovableKeys(const CommandSpec& spec);

// Appends the keys of `args` (the whole line, args[0] the command's name) to *out. False when
// a sorted-set command's count is not a valid one (not an integer, below 1, or more keys than
// arguments): Redis's "Invalid arguments specified for command". A script's bad count names
// no keys (EVAL/FCALL answer the error themselves).
bool CommandKeys(const CommandSpec& spec, std::span<const std::string_view> args,
                 std::vector<KeyArg>* out);

}  // namespace latch
