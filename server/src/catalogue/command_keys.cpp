#include "catalogue/command_keys.h"

#include <algorithm>
#include <cstdint>

#include "catalogue/command_spec.h"
#include "latch/protocol/int_parse.h"

namespace latch {
namespace {

// Where a command's key count is (its keys follow it), 0 when it has none.
std::size_t KeyCountPosition(std::string_view name) {
  if (name == "eval" || name == "evalsha" || name == "eval_ro" || name == "evalsha_ro" ||
      name == "fcall" || name == "fcall_ro" || name == "zunionstore" || name == "zinterstore" ||
      name == "zdiffstore") {
    return 2;
  }
  if (name == "zunion" || name == "zinter" || name == "zdiff" || name == "zintercard" ||
      name == "zmpop") {
    return 1;
  }
  return 0;
}

bool IsScriptCall(std::string_view name) {
  return name.starts_with("eval") || name.starts_with("fcall");
}

}  // namespace

bool CommandHasKeys(const CommandSpec& spec) {
  return spec.first_key > 0 || KeyCountPosition(spec.name) != 0;
}

bool CommandHasMovableKeys(const CommandSpec& spec) { return KeyCountPosition(spec.name) != 0; }

bool CommandKeys(const CommandSpec& spec, std::span<const std::string_view> args,
                 std::vector<KeyArg>* out) {
  const KeyAccess fixed = (spec.flags & kCmdWrite) ? KeyAccess::kWrite : KeyAccess::kRead;
  if (spec.first_key > 0) {  // ZUNIONSTORE's destination comes first, then its sources
    const auto first = static_cast<std::size_t>(spec.first_key);
    const std::size_t last = spec.last_key < 0
                                 ? args.size() + static_cast<std::size_t>(spec.last_key)
                                 : static_cast<std::size_t>(spec.last_key);
    const std::size_t step = spec.key_step > 0 ? static_cast<std::size_t>(spec.key_step) : 1;
    for (std::size_t i = first; i <= last && i < args.size(); i += step) {
      out->push_back({i, fixed});
    }
  }
  const std::size_t at = KeyCountPosition(spec.name);
  if (at == 0) return true;
  // A script may name no keys, and one whose count is bad names none (Redis: its keys are
  // not mandatory; the command itself answers the error). The sorted-set commands need one.
  const bool script = IsScriptCall(spec.name);
  std::int64_t n = 0;
  if (args.size() <= at || !ParseInt64(args[at], &n) || n < (script ? 0 : 1) ||
      static_cast<std::uint64_t>(n) > args.size() - at - 1) {
    return script;
  }
  // A script's keys are read and written as it likes (EVAL_RO/FCALL_RO: read only); the
  // sorted-set commands read their sources.
  KeyAccess access = KeyAccess::kRead;
  if (script && !spec.name.ends_with("_ro")) access = KeyAccess::kReadWrite;
  if (spec.name == "zmpop") access = KeyAccess::kWrite;  // pops from them
  for (std::size_t i = at + 1; i <= at + static_cast<std::size_t>(n); ++i) {
    out->push_back({i, access});
  }
  return true;
}

}  // namespace latch
