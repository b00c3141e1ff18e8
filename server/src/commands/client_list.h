#pragma once
// One CLIENT LIST / CLIENT INFO line, in Redis's field order (fields latchd has no notion
// of are reported with their idle values). Caller holds ClientRegistry::mu.
#include <string>

#include "server_state.h"

namespace latch {

void AppendClientLine(const ClientInfo& c, std::int64_t now_mono_ms, std::string* out);

}  // namespace latch
