#include "server_log.h"

#include <spdlog/spdlog.h>

namespace latch {

void ApplyLogLevel(std::string_view level) {
  spdlog::level::level_enum l = spdlog::level::info;
  if (level == "debug") {
    l = spdlog::level::debug;
  } else if (level == "verbose") {
    l = spdlog::level::info;
  } else if (level == "notice") {
    l = spdlog::level::info;
  } else if (level == "warning") {
    l = spdlog::level::warn;
  } else if (level == "nothing") {
    l = spdlog::level::off;
  }
  spdlog::set_level(l);
}

}  // namespace latch
