#include "config/log_setup.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/sinks/syslog_sink.h>
#include <spdlog/spdlog.h>
#include <syslog.h>

#include <string>
#include <vector>

#include "config/log_file_sink.h"

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

int SyslogFacility(std::string_view name) {
  if (name == "user") return LOG_USER;
  constexpr int kLocal[] = {LOG_LOCAL0, LOG_LOCAL1, LOG_LOCAL2, LOG_LOCAL3,
                            LOG_LOCAL4, LOG_LOCAL5, LOG_LOCAL6, LOG_LOCAL7};
  if (name.size() == 6 && name.substr(0, 5) == "local" && name[5] >= '0' && name[5] <= '7') {
    return kLocal[name[5] - '0'];
  }
  return LOG_LOCAL0;
}

std::shared_ptr<spdlog::logger> MakeLogger(const Options& options) {
  std::vector<spdlog::sink_ptr> sinks;
  if (options.logfile.empty()) {
    sinks.push_back(std::make_shared<spdlog::sinks::stdout_sink_mt>());
  } else {
    sinks.push_back(std::make_shared<LogFileSink>(options.logfile));
  }
  auto formatter = std::make_unique<spdlog::pattern_formatter>();
  formatter->add_flag<LevelMarkFlag>('*').set_pattern("%P:M %d %b %Y %H:%M:%S.%e %* %v");
  for (auto& sink : sinks) sink->set_formatter(formatter->clone());
  if (options.syslog_enabled) {
    // syslog adds its own time, host and pid: the message goes as it is, with the level
    // mapped to syslog's priority by spdlog.
    sinks.push_back(std::make_shared<spdlog::sinks::syslog_sink_mt>(
        options.syslog_ident, LOG_PID | LOG_NDELAY, SyslogFacility(options.syslog_facility),
        /*enable_formatting=*/false));
  }
  auto logger = std::make_shared<spdlog::logger>("latchd", sinks.begin(), sinks.end());
  logger->set_level(SpdlogLevel(options.loglevel));
  logger->flush_on(spdlog::level::trace);
  return logger;
}

std::shared_ptr<spdlog::logger> ServerLogger(const Options& options) {
  std::shared_ptr<spdlog::logger> logger = spdlog::get(options.logger_name);
  if (logger == nullptr) {
    logger = std::make_shared<spdlog::logger>(options.logger_name,
                                              std::make_shared<spdlog::sinks::stderr_sink_mt>());
    auto formatter = std::make_unique<spdlog::pattern_formatter>();
    formatter->add_flag<LevelMarkFlag>('*').set_pattern("%P:M %d %b %Y %H:%M:%S.%e %* %v");
    logger->set_formatter(std::move(formatter));
    logger->flush_on(spdlog::level::trace);
  }
  logger->set_level(SpdlogLevel(options.loglevel));
  return logger;
}

void ReopenLogFile(spdlog::logger& logger) {
  for (const spdlog::sink_ptr& sink : logger.sinks()) {
    if (auto* file = dynamic_cast<LogFileSink*>(sink.get())) file->Reopen();
  }
}

}  // namespace latch::config
