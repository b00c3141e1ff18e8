#pragma once
// The client-output-buffer-limit directive: "<class> <hard> <soft> <soft-seconds>", one or
// more groups, classes normal, replica (alias slave) and pubsub, as redis.conf. A value with
// any bad group changes nothing; CONFIG GET shows all three classes, Redis's way:
// "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60".
#include <optional>
#include <string>
#include <string_view>

#include "latch/options.h"

namespace latch::config {

std::string GetClientOutputBufferLimit(const Options& o);
// Returns Redis's reason on failure, leaving `o` unchanged.
std::optional<std::string> SetClientOutputBufferLimit(Options& o, std::string_view value);

}  // namespace latch::config
