#include "config/log_setup.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

namespace latch::config {
namespace {

// Redis's level marks, as the custom pattern flag %*.
class LevelMarkFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm& /*tm*/,
              spdlog::memory_buf_t& dest) override {
    char mark = '#';
    switch (msg.level) {
      case spdlog::level::trace:
        mark = '.';
        break;
      case spdlog::level::debug:
        mark = '-';
        break;
      case spdlog::level::info:
        mark = '*';
        break;
      default:
        break;
    }
    dest.push_back(mark);
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<LevelMarkFlag>();
  }
};

}  // namespace

spdlog::level::level_enum SpdlogLevel(std::string_view loglevel) {
  if (loglevel == "debug") return spdlog::level::trace;
  if (loglevel == "verbose") return spdlog::level::debug;
  if (loglevel == "warning") return spdlog::level::warn;
  if (loglevel == "nothing") return spdlog::level::off;
  return spdlog::level::info;
}

std::shared_ptr<spdlog::logger> MakeLogger(const Options& options) {
  spdlog::sink_ptr sink;
  if (options.logfile.empty()) {
    sink = std::make_shared<spdlog::sinks::stdout_sink_mt>();
  } else {
    // spdlog would create missing directories; Redis refuses, and so do we.
    std::FILE* probe = std::fopen(options.logfile.c_str(), "a");
    if (probe == nullptr) {
      throw std::runtime_error(std::string("Can't open the log file: ") + std::strerror(errno));
    }
    std::fclose(probe);
    sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(options.logfile, /*truncate=*/false);
  }
  auto logger = std::make_shared<spdlog::logger>("latchd", std::move(sink));
  auto formatter = std::make_unique<spdlog::pattern_formatter>();
  formatter->add_flag<LevelMarkFlag>('*').set_pattern("%P:M %d %b %Y %H:%M:%S.%e %* %v");
  logger->set_formatter(std::move(formatter));
  logger->set_level(SpdlogLevel(options.loglevel));
  logger->flush_on(spdlog::level::trace);
  return logger;
}

}  // namespace latch::config
