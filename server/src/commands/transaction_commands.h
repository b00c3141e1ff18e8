#pragma once
#include "commands/context.h"

namespace latch {

// Drops the session's WATCHes (EXEC, DISCARD, UNWATCH, disconnect).
void ClearWatches(Session& s, WatchRegistry& registry);

}  // namespace latch
