#pragma once
#include <string_view>

#include "commands/context.h"

namespace latch {

// Drops the session's WATCHes (EXEC, DISCARD, UNWATCH, disconnect).
void ClearWatches(Session& s, WatchRegistry& registry);
// Leaves MULTI and drops the queue (EXEC, DISCARD, RESET).
void ResetMulti(Session& s);
// An EXEC refused before its queue runs (NOAUTH, wrong arity, BUSY, OOM, ...): as Redis 7.0,
// the transaction is discarded (queue and WATCHes dropped, even without MULTI) and the
// reply is EXECABORT naming the refusal. `error` is the refusal without its leading dash.
void AbortExec(CommandContext& ctx, std::string_view error);

}  // namespace latch
