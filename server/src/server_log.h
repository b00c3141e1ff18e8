#pragma once
// Maps redis.conf log levels onto spdlog's (debug -> debug, verbose -> info... see .cpp).
#include <string_view>

namespace latch {

void ApplyLogLevel(std::string_view level);

}  // namespace latch
