#pragma once
// The log file sink of latchd: appends to `logfile` and follows logrotate. Redis opens its log
// file for every line, so a file that was moved away (logrotate without copytruncate) is
// never written again; this sink keeps the file open and checks, before each line, that the
// path still names the open file (one stat), reopening it when it does not. Reopen() forces a
// reopen (SIGHUP). Lines are flushed as they are written, as Redis does.
#include <spdlog/sinks/base_sink.h>
#include <sys/types.h>

#include <atomic>
#include <cstdio>
#include <mutex>
#include <string>

namespace latch::config {

class LogFileSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  // Throws std::runtime_error("Can't open the log file: <reason>"), Redis's text, when the
  // file cannot be opened (a missing directory is not created).
  explicit LogFileSink(std::string path);
  ~LogFileSink() override;
  LogFileSink(const LogFileSink&) = delete;
  LogFileSink& operator=(const LogFileSink&) = delete;

  // Reopens before the next line (safe from any thread).
  void Reopen() { reopen_requested_.store(true, std::memory_order_relaxed); }
  const std::string& path() const { return path_; }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override;
  void flush_() override;

 private:
  // Opens path_ for appending and remembers which file it is; false when it cannot.
  bool Open();
  bool PathStillNamesOpenFile() const;

  std::string path_;
  std::FILE* file_ = nullptr;
  dev_t device_ = 0;
  ino_t inode_ = 0;
  std::atomic<bool> reopen_requested_{false};
};

}  // namespace latch::config
