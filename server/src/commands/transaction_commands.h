#pragma once
#include "commands/context.h"

namespace latch {

// Drops the session's WATCHes (EXEC, DISCARD, UNWATCH, disconnect).
void ClearWatches(Session& s, WatchRegistry& registry);
// Leaves MULTI and drops the queue (EXEC, DISCARD, RESET).
void ResetMulti(Session& s);

}  // namespace latch
